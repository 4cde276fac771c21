#include "lowcomm/comm/participation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/core/splitmix.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {
constexpr std::uint64_t kDropoutStream = 0x64726f706f7574ull;  // "dropout": unrelated to other draws
}

Participation::Participation(int world_size, double probability, std::vector<Outage> outages, std::uint64_t seed)
    : world_size_(world_size), probability_(probability), outages_(std::move(outages)), seed_(seed) {
  if (!(probability >= 0.0 && probability < 1.0)) {
    throw ConfigError(fmt::format("cluster.dropout = {} must be in [0, 1)", probability));
  }
  for (const Outage& o : outages_) {
    if (o.rank < 0 || o.rank >= world_size) {
      throw ConfigError(fmt::format("an outage of rank {} in a job of {} ranks", o.rank, world_size));
    }
    if (o.first > o.last) throw ConfigError(fmt::format("an outage from step {} to step {}", o.first, o.last));
  }
}

std::vector<bool> Participation::present(std::uint64_t step) const {
  if (always_everyone()) return {};
  std::vector<bool> present(static_cast<std::size_t>(world_size_), true);
  for (int r = 0; r < world_size_; ++r) {
    if (probability_ > 0.0) {
      std::uint64_t state = mix_seed({seed_, kDropoutStream, step, static_cast<std::uint64_t>(r)});
      if (uniform01(state) < probability_) present[static_cast<std::size_t>(r)] = false;
    }
  }
  for (const Outage& o : outages_) {
    if (step >= o.first && step <= o.last) present[static_cast<std::size_t>(o.rank)] = false;
  }
  if (std::ranges::all_of(present, [](bool p) { return p; })) return {};  // a step like any other
  if (std::ranges::none_of(present, [](bool p) { return p; })) {
    present[static_cast<std::size_t>(step % static_cast<std::uint64_t>(world_size_))] = true;
  }
  return present;
}

}  // namespace lowcomm

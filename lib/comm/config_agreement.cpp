// Checking that every rank resolved the same configuration: ranks started with different files
// or --set options would otherwise run a different experiment than the log says, silently.
#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "lowcomm/comm/config_agreement.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

constexpr std::size_t max_ranks_listed = 16;

std::string differing_ranks_message(const std::vector<std::uint64_t>& hashes) {
  std::vector<int> differing;
  for (std::size_t rank = 1; rank < hashes.size(); ++rank) {
    if (hashes[rank] != hashes[0]) differing.push_back(static_cast<int>(rank));
  }
  std::string listed;
  for (std::size_t i = 0; i < differing.size() && i < max_ranks_listed; ++i) {
    listed += fmt::format("{}{}", i == 0 ? "" : ", ", differing[i]);
  }
  if (differing.size() > max_ranks_listed) {
    listed += fmt::format(", ... ({} ranks in all)", differing.size());
  }
  return fmt::format(
      "the resolved configuration differs between ranks: rank{} {} of {} differ{} from rank 0 "
      "(config hash {:016x} on rank 0, {:016x} on rank {}). Pass the same config file and the "
      "same --set options to every rank; comparing the resolved configuration (to_toml()) of "
      "rank 0 and rank {} shows the difference.",
      differing.size() == 1 ? "" : "s", listed, hashes.size(), differing.size() == 1 ? "s" : "",
      hashes[0], hashes[differing[0]], differing[0], differing[0]);
}

}  // namespace

void require_identical_on_all_ranks(const Config& config, const ControlChannel& control) {
  const std::uint64_t hash = config.hash();
  // One all-reduce of {hash, ~hash} under MAX yields the maximum and the complement of the
  // minimum: they are equal exactly when all ranks agree, the common case, at O(1) cost.
  std::uint64_t extreme[2] = {hash, ~hash};
  control.max_each(std::span<std::uint64_t>(extreme));
  if (extreme[0] == ~extreme[1]) return;
  // Every rank took this branch, so all can afford one gather to name the ranks that differ.
  throw ConfigError(differing_ranks_message(control.all_gather(hash)));
}

}  // namespace lowcomm

#include "lowcomm/compress/merge_schedule.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm {

std::vector<MergeRound> merge_rounds(int world_size) {
  if (world_size < 1) throw Error(fmt::format("merge_rounds: {} ranks", world_size));
  int p = 1;
  while (p * 2 <= world_size) p *= 2;
  const int extra = world_size - p;
  const auto ranks = static_cast<std::size_t>(world_size);
  std::vector<MergeRound> rounds;
  const auto fold = [&](bool unfold) {
    MergeRound round{std::vector<int>(ranks, -1), unfold};
    for (int i = 0; i < extra; ++i) {
      round.partners[static_cast<std::size_t>(i)] = i + p;
      round.partners[static_cast<std::size_t>(i + p)] = i;
    }
    rounds.push_back(std::move(round));
  };
  if (extra > 0) fold(false);
  for (int d = 1; d < p; d *= 2) {
    MergeRound round{std::vector<int>(ranks, -1), false};
    for (int i = 0; i < p; ++i) round.partners[static_cast<std::size_t>(i)] = i ^ d;
    rounds.push_back(std::move(round));
  }
  if (extra > 0) fold(true);
  return rounds;
}

}  // namespace lowcomm

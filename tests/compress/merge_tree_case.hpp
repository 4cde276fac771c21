#pragma once
// A merge-tree fixture case's shape (gtopk.h5, demo_tree.h5, sparseloco_tree.h5: the layout of
// make_gtopk_fixture.py and its siblings): each rank's group when the case is regional, and who is
// present, as merge_rounds and CompressedAllReduce take them; and the case run in one process.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fixtures/fixtures.hpp"
#include "lowcomm/comm/participation.hpp"
#include "lowcomm/compress/compressor.hpp"
#include "lowcomm/compress/merge_schedule.hpp"

namespace lowcomm::test {

struct MergeTreeCase {
  std::vector<int> groups;    // empty: the butterfly
  std::vector<bool> present;  // one per rank

  explicit MergeTreeCase(const FixtureFile& file, const std::string& group) {
    if (file.attr_int(group, "grouped") != 0) {
      for (const std::int64_t g : file.ints(group + "/groups")) groups.push_back(static_cast<int>(g));
    }
    for (const std::int64_t p : file.ints(group + "/present")) present.push_back(p != 0);
  }

  int world_size() const { return static_cast<int>(present.size()); }
  int participants() const { return static_cast<int>(std::ranges::count(present, true)); }

  // The absent ranks out of step 0 (everyone, always, when none is).
  Participation participation() const {
    std::vector<Outage> outages;
    for (std::size_t r = 0; r < present.size(); ++r) {
      if (!present[r]) outages.push_back({.rank = static_cast<int>(r), .first = 0, .last = 0});
    }
    return outages.empty() ? Participation{} : Participation(static_cast<int>(present.size()), 0.0, outages, 0);
  }
};

// One step of a merging compressor on W simulated ranks in one process: each rank's encode of its
// slice of `input` (W slices of the unit's size, back to back), the rounds of merge_rounds run by
// hand with the compressor's merge, and each rank's decode, which gives `aggregates`. Every rank
// must end with the same merged payload (checked). The compressors, scratches and units stay for
// the caller's checks of what each rank transmitted.
struct InProcessTree {
  std::vector<std::unique_ptr<Compressor>> ranks;
  std::vector<UnitScratch> scratch;
  std::vector<UnitContext> units;              // rank r's view of the unit
  std::vector<std::vector<float>> aggregates;  // each rank's decode
  std::vector<std::int64_t> sends;             // rounds each rank sent in
  std::vector<std::int64_t> exchanges;         // rounds each rank sent or received in
  std::vector<std::byte> merged;               // the payload every rank ended with

  InProcessTree(const MergeTreeCase& tree, const UnitContext& unit, std::span<const float> input,
                const std::function<std::unique_ptr<Compressor>()>& make) {
    const int w = tree.world_size();
    const auto n = static_cast<std::size_t>(unit.numel());
    scratch.resize(static_cast<std::size_t>(w));
    std::vector<std::vector<std::byte>> held;
    for (int r = 0; r < w; ++r) {
      UnitContext& mine = units.emplace_back(unit);
      mine.world_size = w;
      mine.participants = tree.participants();
      mine.rank = r;
      mine.present = tree.present[static_cast<std::size_t>(r)];
      ranks.push_back(make());
      const auto at = static_cast<std::size_t>(r);
      const Message message = ranks.back()->encode(mine, input.subspan(at * n, n), scratch[at]);
      EXPECT_EQ(message.exchange, Exchange::Merge);
      held.push_back(message.bytes);
    }
    sends.assign(static_cast<std::size_t>(w), 0);
    exchanges.assign(static_cast<std::size_t>(w), 0);
    for (const MergeRound& round : merge_rounds(w, tree.groups, tree.present)) {
      const std::vector<std::vector<std::byte>> before = held;
      for (int r = 0; r < w; ++r) {
        const int from = merge_source(round, r);
        const auto at = static_cast<std::size_t>(r);
        sends[at] += round.sends_to[at] >= 0 ? 1 : 0;
        exchanges[at] += round.sends_to[at] >= 0 || from >= 0 ? 1 : 0;
        if (from < 0) continue;
        const std::vector<std::byte>& received = before[static_cast<std::size_t>(from)];
        held[at] = round.copy ? received : ranks[at]->merge(units[at], before[at], received);
      }
    }
    merged = held[0];
    for (int r = 0; r < w; ++r) {
      const auto at = static_cast<std::size_t>(r);
      EXPECT_EQ(held[at], held[0]) << "rank " << r << " ended with another merge than rank 0";
      Received received;
      received.merged = held[at];
      std::vector<float>& aggregate = aggregates.emplace_back(n, -1.0f);
      EXPECT_FALSE(ranks[at]->decode(units[at], 0, received, scratch[at], aggregate));
    }
  }
};

}  // namespace lowcomm::test

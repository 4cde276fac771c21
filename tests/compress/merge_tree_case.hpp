#pragma once
// A merge-tree fixture case's shape (gtopk.h5, demo_tree.h5: make_gtopk_fixture.py's layout):
// each rank's group when the case is regional, and who is present, as merge_rounds and
// CompressedAllReduce take them.
#include <algorithm>
#include <string>
#include <vector>

#include "fixtures/fixtures.hpp"
#include "lowcomm/comm/participation.hpp"

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

}  // namespace lowcomm::test

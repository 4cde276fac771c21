#include "lowcomm/compress/merge_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Rounds over `world_size` ranks, each naming its messages between ranks by their real numbers.
class Rounds {
 public:
  explicit Rounds(int world_size) : world_size_(world_size) {}

  // A new round; `send(from, to)` adds a message to it.
  void begin(bool copy) { rounds_.push_back({std::vector<int>(static_cast<std::size_t>(world_size_), -1), copy}); }
  void send(int from, int to) { rounds_.back().sends_to[static_cast<std::size_t>(from)] = to; }

  // The butterfly over `ranks` (every one holding a payload), in the order given.
  void butterfly(const std::vector<int>& ranks) {
    const int count = static_cast<int>(ranks.size());
    int p = 1;
    while (p * 2 <= count) p *= 2;
    const int extra = count - p;
    const auto at = [&](int i) { return ranks[static_cast<std::size_t>(i)]; };
    if (extra > 0) {
      begin(false);
      for (int i = 0; i < extra; ++i) {
        send(at(i), at(i + p));
        send(at(i + p), at(i));
      }
    }
    for (int d = 1; d < p; d *= 2) {
      begin(false);
      for (int i = 0; i < p; ++i) send(at(i), at(i ^ d));
    }
    if (extra > 0) {
      begin(true);
      for (int i = 0; i < extra; ++i) send(at(i), at(i + p));
    }
  }

  // Reduce up, butterfly across the representatives, broadcast down (the header's regional shape).
  void regional(const std::vector<std::vector<int>>& groups) {
    std::size_t largest = 0;
    std::vector<int> representatives;
    for (const std::vector<int>& members : groups) {
      largest = std::max(largest, members.size());
      representatives.push_back(members.front());
    }
    for (std::size_t d = 1; d < largest; d *= 2) {
      begin(false);
      for (const std::vector<int>& members : groups) {
        for (std::size_t i = d; i < members.size(); i += 2 * d) send(members[i], members[i - d]);
      }
    }
    butterfly(representatives);
    std::size_t top = 1;
    while (top * 2 < largest) top *= 2;
    for (std::size_t d = top; d >= 1 && largest > 1; d /= 2) {
      begin(true);
      for (const std::vector<int>& members : groups) {
        for (std::size_t i = 0; i + d < members.size(); i += 2 * d) send(members[i], members[i + d]);
      }
    }
  }

  // The absent ranks' copies from the present ones.
  void hand_out(const std::vector<int>& present, const std::vector<int>& absent) {
    for (std::size_t j = 0; j < absent.size(); ++j) {
      if (j % present.size() == 0) begin(true);
      send(present[j % present.size()], absent[j]);
    }
  }

  std::vector<MergeRound> take() { return std::move(rounds_); }

 private:
  int world_size_;
  std::vector<MergeRound> rounds_;
};

}  // namespace

int merge_source(const MergeRound& round, int rank) {
  const auto found = std::ranges::find(round.sends_to, rank);
  return found == round.sends_to.end() ? -1 : static_cast<int>(found - round.sends_to.begin());
}

std::vector<MergeRound> merge_rounds(int world_size, const std::vector<int>& groups, const std::vector<bool>& present) {
  if (world_size < 1) throw Error(fmt::format("merge_rounds: {} ranks", world_size));
  const auto ranks = static_cast<std::size_t>(world_size);
  if ((!groups.empty() && groups.size() != ranks) || (!present.empty() && present.size() != ranks)) {
    throw Error(fmt::format("merge_rounds: {} ranks with {} groups and {} presence flags", world_size, groups.size(),
                            present.size()));
  }
  std::vector<int> in, out;
  for (int r = 0; r < world_size; ++r) (present.empty() || present[static_cast<std::size_t>(r)] ? in : out).push_back(r);
  if (in.empty()) throw Error("merge_rounds: no rank is present, so there is nothing to merge");
  Rounds rounds(world_size);
  if (groups.empty()) {
    rounds.butterfly(in);
  } else {
    std::map<int, std::size_t> place;  // group id -> its position in `members`, by first present rank
    std::vector<std::vector<int>> members;
    for (const int r : in) {
      const auto [at, added] = place.try_emplace(groups[static_cast<std::size_t>(r)], members.size());
      if (added) members.emplace_back();
      members[at->second].push_back(r);
    }
    rounds.regional(members);
  }
  rounds.hand_out(in, out);
  return rounds.take();
}

}  // namespace lowcomm

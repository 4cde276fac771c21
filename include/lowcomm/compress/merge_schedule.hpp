#pragma once
// The rounds of point-to-point messages a Merged exchange runs (Compressor::merge,
// Exchange::Merge), so that every rank ends with the merge of every present rank's payload. Two
// shapes, both run over the ranks present in the step only (P of them, in rank order):
//
// The butterfly (no groups): gTop-k's tree (Shi et al., ICDCS 2019) with every pair swapping
// instead of one side sending, so that no broadcast is needed. With p the largest power of two
// ≤ P and r = P − p (i: a present rank's place among the P):
//   fold (r > 0):   i < r and i + p swap and both merge: the pair holds one payload;
//   d = 1, 2, ..., p/2: every i < p swaps with i xor d and merges;
//   unfold (r > 0): i sends its result to i + p, which takes it.
//
// Regional (ranks in groups: regions, nodes): inside each group, members in rank order, the
// first the group's representative, m_max the largest group's size:
//   reduce:    d = 1, 2, 4, ... < m_max: member i with i mod 2d = d sends to member i − d, which merges;
//   across:    the butterfly above over the representatives (rank order);
//   broadcast: d = the largest power of two < m_max, ..., 1: member i with i mod 2d = 0 sends to
//              member i + d (if there is one), which takes it.
// Only representatives cross between groups, each with about log2(groups) messages; members
// send one message up and receive one down. One group is the paper's own reduce-and-broadcast.
//
// Last, in either shape, the absent ranks (in rank order, the j-th of them) take the result from
// the present rank j mod P, in round j / P: a dropped peer merges nothing but still receives the
// step's aggregate, as it does from a gather.
//
// The merge order is the same on every rank, so with a merge that does not depend on its
// arguments' order the result is identical everywhere.
#include <vector>

namespace lowcomm {

struct MergeRound {
  std::vector<int> sends_to;  // one per rank: where it sends its payload this round, or -1
  bool copy = false;          // receivers take what arrives as their result instead of merging it
};

// The rank a round's message to `rank` comes from, or -1.
int merge_source(const MergeRound& round, int rank);

// The rounds for `world_size` ranks. `groups`: each rank's group (any integers; empty: the
// butterfly); `present`: who takes part in the step (empty: everyone). Throws lowcomm::Error
// below one rank, for a groups or present list of another length, or when no rank is present.
std::vector<MergeRound> merge_rounds(int world_size, const std::vector<int>& groups = {},
                                     const std::vector<bool>& present = {});

}  // namespace lowcomm

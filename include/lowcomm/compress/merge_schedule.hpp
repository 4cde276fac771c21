#pragma once
// The butterfly a Merged exchange runs (Compressor::merge, Exchange::Merge): gTop-k's tree
// (Shi et al., ICDCS 2019) with every pair swapping instead of one side sending, so that after
// log2 W rounds every rank holds the merge of all W payloads and no broadcast is needed. With p
// the largest power of two ≤ W and r = W − p:
//   fold (r > 0):   ranks i < r and i + p swap and both merge: the pair holds one payload;
//   d = 1, 2, ..., p/2: every rank i < p swaps with i xor d and merges;
//   unfold (r > 0): rank i + p takes rank i's result (what i receives back is not used).
// Each round is one Communicator::exchange_pairs; the merge tree is the same on every rank, so
// with a merge that does not depend on its arguments' order the result is identical everywhere.
#include <vector>

namespace lowcomm {

struct MergeRound {
  std::vector<int> partners;  // one per rank: its partner this round, or -1 (sits out)
  bool unfold = false;        // the last round of a non-power-of-two world: copy, do not merge
};

// The rounds for `world_size` ranks (none for one rank). Throws lowcomm::Error below one.
std::vector<MergeRound> merge_rounds(int world_size);

}  // namespace lowcomm

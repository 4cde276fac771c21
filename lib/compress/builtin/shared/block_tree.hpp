#pragma once
// The payload of a merge tree over per-block selections: DeMo's (dct_topk) and SparseLoCo's
// (sparseloco) exchange = "tree". Block b's k entries sit at [b·k, (b+1)·k), sorted by their index
// within the block; each is a sum of values and the number of ranks summed into it. On the wire:
// the indices (the compressor's index encoding), the sums (its value encoding, which must be fp32:
// a merge adds them), then one uint16 count per entry. A rank's own payload is its selection with
// counts of 1; a merge takes, per block, the union of two payloads' entries, adds sums and counts
// where both hold an index, and keeps the k largest |sum| (ties: lower index). The receivers'
// mean of an entry is sum / count, the mean over the ranks whose entries reached it, so with
// nothing dropped the tree's aggregate is the gather's per-entry mean.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "lowcomm/compress/index_encoding.hpp"
#include "lowcomm/compress/unit.hpp"
#include "lowcomm/compress/value_encoding.hpp"

namespace lowcomm::builtin {

struct BlockTreeEntries {
  std::vector<std::int64_t> indices;  // within their block
  std::vector<float> sums;
  std::vector<std::uint32_t> counts;
  void add(std::int64_t index, float sum, std::uint32_t count) {
    indices.push_back(index);
    sums.push_back(sum);
    counts.push_back(count);
  }
};

class BlockTree {
 public:
  struct Shape {
    std::int64_t blocks = 0;
    std::int64_t k = 0;           // entries per block, at most block_size
    std::int64_t block_size = 0;  // the indices' bound
  };
  // `who` names the compressor in errors ("dct_topk (tree)"); the kernels run on `backend`.
  BlockTree(std::string_view who, Shape shape, ValueEncoding values, IndexEncoding indices, kernels::Backend backend);

  std::size_t selected() const { return static_cast<std::size_t>(shape_.blocks * shape_.k); }
  std::size_t payload_bytes() const;

  // A rank's own payload: its selection, k entries per block in any order within the block.
  std::vector<std::byte> own(const UnitContext& unit, std::span<const std::int64_t> indices,
                             std::span<const float> values) const;
  std::vector<std::byte> merge(const UnitContext& unit, std::span<const std::byte> mine,
                               std::span<const std::byte> theirs) const;
  // A payload's entries, checked (throwing, naming `whose`): its size, finite sums, counts of at
  // least one rank and at most those taking part, every index once in its block and in order.
  BlockTreeEntries read(const UnitContext& unit, std::span<const std::byte> payload, const char* whose) const;
  // What this rank transmitted (as gTop-k counts it): kept[e] = values[e] where its own entry e
  // (block e / k) has its index among `merged`'s entries of that block, else 0.
  void keep_own(const BlockTreeEntries& merged, std::span<const std::int64_t> indices, std::span<const float> values,
                std::span<float> kept) const;

 private:
  std::size_t index_bytes() const;
  std::size_t value_bytes() const;
  std::vector<std::byte> write(const UnitContext& unit, const BlockTreeEntries& entries) const;

  std::string_view who_;  // a literal
  Shape shape_;
  ValueEncoding values_;
  IndexEncoding indices_;
  kernels::Backend backend_;
};

}  // namespace lowcomm::builtin

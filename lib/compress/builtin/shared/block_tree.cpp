// block_tree.hpp: the per-block tree payload shared by dct_topk and sparseloco.
#include "block_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "lowcomm/error.hpp"

namespace lowcomm::builtin {

namespace {
using Count = std::uint16_t;  // ranks summed into an entry, on the wire
}  // namespace

BlockTree::BlockTree(std::string_view who, Shape shape, ValueEncoding values, IndexEncoding indices,
                     kernels::Backend backend)
    : who_(who), shape_(shape), values_(values), indices_(indices), backend_(backend) {}

std::size_t BlockTree::index_bytes() const {
  return indices_.bytes(selected(), static_cast<std::uint64_t>(shape_.block_size));
}
std::size_t BlockTree::value_bytes() const { return values_.bytes(selected()); }
std::size_t BlockTree::payload_bytes() const { return index_bytes() + value_bytes() + sizeof(Count) * selected(); }

std::vector<std::byte> BlockTree::own(const UnitContext& unit, std::span<const std::int64_t> indices,
                                      std::span<const float> values) const {
  if (unit.world_size > std::numeric_limits<Count>::max()) {
    throw Error(fmt::format("{}: {} ranks, more than the {} an entry's count holds", who_, unit.world_size,
                            std::numeric_limits<Count>::max()));
  }
  // Each block's entries in index order (a selection comes in magnitude order).
  const auto k = static_cast<std::size_t>(shape_.k);
  BlockTreeEntries sorted;
  std::vector<std::size_t> order(k);
  for (std::size_t begin = 0; begin < indices.size(); begin += k) {
    std::iota(order.begin(), order.end(), begin);
    std::ranges::sort(order, [&](std::size_t x, std::size_t y) { return indices[x] < indices[y]; });
    for (const std::size_t at : order) sorted.add(indices[at], values[at], 1);
  }
  return write(unit, sorted);
}

// Per block: the union of the two entry sets, sums and counts added where both hold an index, cut
// to the k largest |sum| (ties: lower index). a + b == b + a, so both ranks of a pair compute the
// same bytes.
std::vector<std::byte> BlockTree::merge(const UnitContext& unit, std::span<const std::byte> mine,
                                        std::span<const std::byte> theirs) const {
  const BlockTreeEntries a = read(unit, mine, "its own merged payload");
  const BlockTreeEntries b = read(unit, theirs, "its partner's payload");
  const auto k = static_cast<std::size_t>(shape_.k);
  BlockTreeEntries kept;
  BlockTreeEntries both;
  std::vector<std::size_t> order;
  for (std::size_t block = 0; block < static_cast<std::size_t>(shape_.blocks); ++block) {
    both.indices.clear();  // kept allocated from block to block
    both.sums.clear();
    both.counts.clear();
    std::size_t i = block * k, j = block * k;
    const std::size_t i_end = i + k, j_end = j + k;
    while (i < i_end || j < j_end) {
      if (j == j_end || (i < i_end && a.indices[i] < b.indices[j])) {
        both.add(a.indices[i], a.sums[i], a.counts[i]);
        ++i;
      } else if (i == i_end || b.indices[j] < a.indices[i]) {
        both.add(b.indices[j], b.sums[j], b.counts[j]);
        ++j;
      } else {
        both.add(a.indices[i], a.sums[i] + b.sums[j], a.counts[i] + b.counts[j]);
        ++i;
        ++j;
      }
    }
    order.resize(both.indices.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](std::size_t x, std::size_t y) {
                        const float ax = std::abs(both.sums[x]), ay = std::abs(both.sums[y]);
                        return ax != ay ? ax > ay : both.indices[x] < both.indices[y];
                      });
    order.resize(k);
    std::ranges::sort(order);  // positions in `both` are in index order
    for (const std::size_t at : order) kept.add(both.indices[at], both.sums[at], both.counts[at]);
  }
  return write(unit, kept);
}

std::vector<std::byte> BlockTree::write(const UnitContext& unit, const BlockTreeEntries& entries) const {
  std::vector<std::byte> payload(payload_bytes());
  const std::span<std::byte> bytes(payload);
  indices_.pack(backend_, entries.indices, static_cast<std::uint64_t>(shape_.block_size), bytes.first(index_bytes()));
  values_.encode(backend_, entries.sums, bytes.subspan(index_bytes(), value_bytes()));
  std::byte* counts = payload.data() + index_bytes() + value_bytes();
  for (std::size_t e = 0; e < entries.counts.size(); ++e) {
    if (entries.counts[e] > std::numeric_limits<Count>::max()) {
      throw Error(fmt::format("{}: unit '{}' merged {} ranks into one entry, more than a count holds", who_, unit.name,
                              entries.counts[e]));
    }
    const auto count = static_cast<Count>(entries.counts[e]);
    std::memcpy(counts + e * sizeof(Count), &count, sizeof(Count));
  }
  return payload;
}

BlockTreeEntries BlockTree::read(const UnitContext& unit, std::span<const std::byte> payload, const char* whose) const {
  if (payload.size() != payload_bytes()) {
    throw Error(fmt::format("{}: {} for '{}' holds {} bytes, expected {}", who_, whose, unit.name, payload.size(),
                            payload_bytes()));
  }
  BlockTreeEntries entries{std::vector<std::int64_t>(selected()), std::vector<float>(selected()),
                           std::vector<std::uint32_t>(selected())};
  indices_.unpack(backend_, payload.first(index_bytes()), static_cast<std::uint64_t>(shape_.block_size),
                  entries.indices);
  values_.decode(backend_, payload.subspan(index_bytes(), value_bytes()), entries.sums);
  const std::byte* counts = payload.data() + index_bytes() + value_bytes();
  const auto k = static_cast<std::size_t>(shape_.k);
  for (std::size_t e = 0; e < entries.counts.size(); ++e) {
    Count count = 0;
    std::memcpy(&count, counts + e * sizeof(Count), sizeof(Count));
    entries.counts[e] = count;
    if (count == 0 || count > std::min(unit.contributors(), int{std::numeric_limits<Count>::max()})) {
      throw Error(fmt::format("{}: {} for '{}' counts {} ranks at entry {} ({} take part)", who_, whose, unit.name,
                              count, e, unit.contributors()));
    }
    if (!std::isfinite(entries.sums[e])) {
      throw Error(fmt::format("{}: {} for '{}' holds {} at entry {}", who_, whose, unit.name, entries.sums[e], e));
    }
    if (entries.indices[e] < 0 || entries.indices[e] >= shape_.block_size) {
      throw Error(fmt::format("{}: {} for '{}' holds index {} in a block of {}", who_, whose, unit.name,
                              entries.indices[e], shape_.block_size));
    }
    if (e % k != 0 && entries.indices[e] <= entries.indices[e - 1]) {
      throw Error(fmt::format("{}: {} for '{}' repeats or misorders index {} in block {}", who_, whose, unit.name,
                              entries.indices[e], e / k));
    }
  }
  return entries;
}

void BlockTree::keep_own(const BlockTreeEntries& merged, std::span<const std::int64_t> indices,
                         std::span<const float> values, std::span<float> kept) const {
  const auto k = static_cast<std::size_t>(shape_.k);
  for (std::size_t e = 0; e < indices.size(); ++e) {
    const auto block = std::span(merged.indices).subspan(e / k * k, k);
    kept[e] = std::ranges::binary_search(block, indices[e]) ? values[e] : 0.0f;
  }
}

}  // namespace lowcomm::builtin

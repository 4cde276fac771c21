// Scatters of (index, value) pairs (scatter.hpp), pairs applied in the order given so that the
// float sums are the Reference's bit for bit on every space.
#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>

#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "kokkos_views.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::kokkos_backend {

namespace {

// The pairs as one 64-bit key each, (slot << 32) | position, sorted: each slot's pairs in a run,
// in their order. Throws for 2^31 pairs or 2^32 slots or more (Kokkos 3.4's device sort counts
// with int).
template <class IndexView>
DeviceView<std::uint64_t> sorted_pairs(std::string_view kernel, const IndexView& index, std::int64_t pairs,
                                       std::size_t slots) {
  if (pairs >= (std::int64_t{1} << 31) || slots >= (std::size_t{1} << 32)) {
    throw Error(fmt::format("{}: {} pairs into {} slots; the kokkos backend takes fewer than 2^31 pairs and 2^32 slots",
                            kernel, pairs, slots));
  }
  DeviceView<std::uint64_t> order("lowcomm::scatter::order", static_cast<std::size_t>(pairs));
  Kokkos::parallel_for("lowcomm::scatter::keys", Range(0, pairs), KOKKOS_LAMBDA(const std::int64_t p) {
    order(p) = (static_cast<std::uint64_t>(index(p)) << 32) | static_cast<std::uint64_t>(p);
  });
  Kokkos::sort(order);
  return order;
}

}  // namespace

// Each slot's run summed in order by one work item: the sequential loop's sums, without two
// items ever writing one slot.
void scatter_add(std::span<const std::int64_t> indices, std::span<const float> values, std::span<float> out) {
  const auto pairs = static_cast<std::int64_t>(indices.size());
  if (pairs == 0) return;
  const auto index = input(indices);
  const auto value = input(values);
  const DeviceView<std::uint64_t> order = sorted_pairs("scatter_add", index, pairs, out.size());
  Output<float> result(out, /*initialised=*/true);
  const auto slots = result.view();
  Kokkos::parallel_for("lowcomm::scatter_add::runs", Range(0, pairs), KOKKOS_LAMBDA(const std::int64_t first) {
    const std::uint64_t slot = order(first) >> 32;
    if (first > 0 && order(first - 1) >> 32 == slot) return;  // not the start of its slot's run
    float sum = slots(slot);
    for (std::int64_t p = first; p < pairs && order(p) >> 32 == slot; ++p) sum += value(order(p) & 0xFFFFFFFFu);
    slots(slot) = sum;
  });
  result.finish();
}

void gather(std::span<const std::int64_t> indices, std::span<const float> source, std::span<float> out) {
  const auto index = input(indices);
  const auto from = input(source);
  Output<float> result(out);
  const auto to = result.view();
  Kokkos::parallel_for("lowcomm::gather", Range(0, static_cast<std::int64_t>(indices.size())),
                       KOKKOS_LAMBDA(const std::int64_t p) { to(p) = from(index(p)); });
  result.finish();
}

// Zeros, then the last pair of each slot's run (the one the sequential loop leaves there).
void scatter_divided(std::span<const std::int64_t> indices, std::span<const float> values, float divisor,
                     std::span<float> out) {
  const auto pairs = static_cast<std::int64_t>(indices.size());
  const auto index = input(indices);
  const auto value = input(values);
  const DeviceView<std::uint64_t> order = sorted_pairs("scatter_divided", index, pairs, out.size());
  Output<float> result(out);
  const auto slots = result.view();
  Kokkos::deep_copy(slots, 0.0f);
  Kokkos::parallel_for("lowcomm::scatter_divided", Range(0, pairs), KOKKOS_LAMBDA(const std::int64_t p) {
    const std::uint64_t slot = order(p) >> 32;
    if (p + 1 < pairs && order(p + 1) >> 32 == slot) return;  // a later pair replaces this one
    slots(slot) = value(order(p) & 0xFFFFFFFFu) / divisor;
  });
  result.finish();
}

// One block per work item, as kernels/cpu's mean_of_block: sum the lists' pairs of the block in
// list order, then divide each touched slot by its count once.
void scatter_mean_per_block(std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                            std::span<float> out) {
  const std::int64_t blocks = static_cast<std::int64_t>(out.size()) / block_size;
  const auto lists = static_cast<std::int64_t>(sources.size());
  const std::int64_t per_list = blocks * k;
  // The lists back to back: one view each for indices and values.
  std::vector<std::int64_t> all_indices;
  std::vector<float> all_values;
  all_indices.reserve(static_cast<std::size_t>(lists * per_list));
  all_values.reserve(static_cast<std::size_t>(lists * per_list));
  for (const BlockPairs& source : sources) {
    all_indices.insert(all_indices.end(), source.indices.begin(), source.indices.end());
    all_values.insert(all_values.end(), source.values.begin(), source.values.end());
  }
  const auto index = input(std::span<const std::int64_t>(all_indices));
  const auto value = input(std::span<const float>(all_values));
  DeviceView<std::uint32_t> counts("lowcomm::scatter_mean_per_block::counts", out.size());
  Output<float> result(out);
  const auto slots = result.view();
  Kokkos::parallel_for("lowcomm::scatter_mean_per_block", Range(0, blocks), KOKKOS_LAMBDA(const std::int64_t b) {
    const std::int64_t base = b * block_size;
    for (std::int64_t s = 0; s < block_size; ++s) slots(base + s) = 0.0f;
    for (std::int64_t l = 0; l < lists; ++l) {
      for (std::int64_t p = l * per_list + b * k; p < l * per_list + (b + 1) * k; ++p) {
        slots(base + index(p)) += value(p);
        counts(base + index(p)) += 1;
      }
    }
    for (std::int64_t l = 0; l < lists; ++l) {
      for (std::int64_t p = l * per_list + b * k; p < l * per_list + (b + 1) * k; ++p) {
        const std::int64_t s = base + index(p);
        if (counts(s) == 0) continue;  // already divided
        slots(s) = slots(s) / static_cast<float>(counts(s));
        counts(s) = 0;
      }
    }
  });
  result.finish();
}

}  // namespace lowcomm::kernels::kokkos_backend

// Scatters of (index, value) pairs (scatter.hpp) and the gather, on the GPU. A float sum depends
// on its order, so instead of atomics the pairs are radix-sorted by slot (cub's sort is stable:
// each slot's values end up side by side, in the order the pairs were given), and one thread per
// run of equal slots then applies its run in that order. The sums, means and last writes are
// therefore the Reference's bit for bit (--fmad=false keeps every add and division IEEE-rounded,
// as on the host). The dispatch has checked every index, so the kernels trust them.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

namespace {

// Each pair's slot and value, stably sorted by slot.
struct SortedPairs {
  DeviceBuffer<std::uint64_t> slots;
  DeviceBuffer<float> values;
};

// `slots` all lie below slot_count.
SortedPairs sort_by_slot(const std::uint64_t* slots, const float* values, std::int64_t pairs,
                         std::size_t slot_count) {
  SortedPairs sorted{DeviceBuffer<std::uint64_t>(static_cast<std::size_t>(pairs)),
                     DeviceBuffer<float>(static_cast<std::size_t>(pairs))};
  // Only the bits a slot below slot_count can have are sorted on: fewer radix passes.
  const int bits = std::max(1, static_cast<int>(std::bit_width(slot_count - 1)));
  std::size_t scratch_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, scratch_bytes, slots, sorted.slots.data(), values,
                                        sorted.values.data(), pairs, 0, bits, stream()),
        "cub::DeviceRadixSort::SortPairs (scratch size)");
  // At least one byte: a null scratch pointer would make the second call a size query again.
  const DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(scratch_bytes, 1));
  check(cub::DeviceRadixSort::SortPairs(scratch.data(), scratch_bytes, slots, sorted.slots.data(), values,
                                        sorted.values.data(), pairs, 0, bits, stream()),
        "cub::DeviceRadixSort::SortPairs");
  return sorted;
}

// Whether sorted pair p begins its slot's run.
__device__ inline bool starts_run(const std::uint64_t* slot, std::int64_t p) {
  return p == 0 || slot[p - 1] != slot[p];
}

// out[slot] += each value of the slot's run, in order, by the thread at the run's start: the
// sequential loop's sums, and no two threads ever write one slot.
__global__ void add_runs(const std::uint64_t* slot, const float* value, std::int64_t pairs, float* out) {
  for (std::int64_t first = first_item(); first < pairs; first += item_stride()) {
    if (!starts_run(slot, first)) continue;
    float sum = out[slot[first]];
    for (std::int64_t p = first; p < pairs && slot[p] == slot[first]; ++p) sum += value[p];
    out[slot[first]] = sum;
  }
}

// out[slot] = the run's sum from 0 in order, divided by the run's length (mean_reference's
// arithmetic: a float sum, then one division by the count as a float).
__global__ void mean_runs(const std::uint64_t* slot, const float* value, std::int64_t pairs, float* out) {
  for (std::int64_t first = first_item(); first < pairs; first += item_stride()) {
    if (!starts_run(slot, first)) continue;
    float sum = 0.0f;
    std::int64_t p = first;
    for (; p < pairs && slot[p] == slot[first]; ++p) sum += value[p];
    out[slot[first]] = sum / static_cast<float>(p - first);
  }
}

// The last pair of each run, divided: the one the sequential loop leaves in the slot.
__global__ void store_run_ends(const std::uint64_t* slot, const float* value, std::int64_t pairs, float divisor,
                               float* out) {
  for (std::int64_t p = first_item(); p < pairs; p += item_stride()) {
    if (p + 1 < pairs && slot[p + 1] == slot[p]) continue;  // a later pair replaces this one
    out[slot[p]] = value[p] / divisor;
  }
}

__global__ void gather_values(const std::int64_t* index, const float* source, std::int64_t count, float* out) {
  for (std::int64_t p = first_item(); p < count; p += item_stride()) out[p] = source[index[p]];
}

// In place, each list's in-block index made absolute: pair p of a list falls in block p / k.
__global__ void absolute_slots(std::uint64_t* slot, std::int64_t pairs, std::int64_t per_list, std::int64_t k,
                               std::int64_t block_size) {
  for (std::int64_t q = first_item(); q < pairs; q += item_stride()) {
    const std::int64_t block = q % per_list / k;
    slot[q] += static_cast<std::uint64_t>(block * block_size);
  }
}

// The indices, non-negative (the dispatch checked), read as the unsigned keys the sort takes.
const std::uint64_t* as_slots(const std::int64_t* indices) { return reinterpret_cast<const std::uint64_t*>(indices); }

}  // namespace

void scatter_add(std::span<const std::int64_t> indices, std::span<const float> values, std::span<float> out) {
  const auto pairs = static_cast<std::int64_t>(indices.size());
  if (pairs == 0) return;
  const Input<std::int64_t> index(indices);
  const Input<float> value(values);
  const SortedPairs sorted = sort_by_slot(as_slots(index.data()), value.data(), pairs, out.size());
  Output<float> result(out, /*initialised=*/true);
  launch("scatter_add", add_runs, pairs, sorted.slots.data(), sorted.values.data(), pairs, result.data());
  result.finish();
}

// The lists back to back are the Reference's concatenation (list after list, each in order), so
// sorting them by absolute slot orders each slot's values as mean_per_block_reference sums them.
// Slots no pair selects stay zero.
void scatter_mean_per_block(std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                            std::span<float> out) {
  const std::int64_t per_list = static_cast<std::int64_t>(out.size()) / block_size * k;
  const std::int64_t pairs = static_cast<std::int64_t>(sources.size()) * per_list;
  if (out.empty()) return;
  Output<float> result(out);
  check(cudaMemsetAsync(result.data(), 0, out.size_bytes(), stream()), "cudaMemsetAsync (scatter_mean_per_block)");
  if (pairs > 0) {
    // The in-block indices are copied as they are (non-negative, so the same bits as unsigned),
    // wherever each list lives: cudaMemcpyDefault reads host and device memory alike.
    DeviceBuffer<std::uint64_t> slots(static_cast<std::size_t>(pairs));
    DeviceBuffer<float> values(static_cast<std::size_t>(pairs));
    for (std::size_t l = 0; l < sources.size(); ++l) {
      const auto offset = static_cast<std::size_t>(per_list) * l;
      check(cudaMemcpyAsync(slots.data() + offset, sources[l].indices.data(), sources[l].indices.size_bytes(),
                            cudaMemcpyDefault, stream()),
            "cudaMemcpyAsync (scatter_mean_per_block indices)");
      check(cudaMemcpyAsync(values.data() + offset, sources[l].values.data(), sources[l].values.size_bytes(),
                            cudaMemcpyDefault, stream()),
            "cudaMemcpyAsync (scatter_mean_per_block values)");
    }
    launch("scatter_mean_per_block (absolute slots)", absolute_slots, pairs, slots.data(), pairs, per_list, k,
           block_size);
    const SortedPairs sorted = sort_by_slot(slots.data(), values.data(), pairs, out.size());
    launch("scatter_mean_per_block", mean_runs, pairs, sorted.slots.data(), sorted.values.data(), pairs,
           result.data());
  }
  result.finish();
}

void gather(std::span<const std::int64_t> indices, std::span<const float> source, std::span<float> out) {
  const auto count = static_cast<std::int64_t>(indices.size());
  if (count == 0) return;
  const Input<std::int64_t> index(indices);
  const Input<float> from(source);
  Output<float> result(out);
  launch("gather", gather_values, count, index.data(), from.data(), count, result.data());
  result.finish();
}

// Zeros, then the last pair of each slot's run divided by `divisor`.
void scatter_divided(std::span<const std::int64_t> indices, std::span<const float> values, float divisor,
                     std::span<float> out) {
  const auto pairs = static_cast<std::int64_t>(indices.size());
  if (out.empty()) return;
  Output<float> result(out);
  check(cudaMemsetAsync(result.data(), 0, out.size_bytes(), stream()), "cudaMemsetAsync (scatter_divided)");
  if (pairs > 0) {
    const Input<std::int64_t> index(indices);
    const Input<float> value(values);
    const SortedPairs sorted = sort_by_slot(as_slots(index.data()), value.data(), pairs, out.size());
    launch("scatter_divided", store_run_ends, pairs, sorted.slots.data(), sorted.values.data(), pairs, divisor,
           result.data());
  }
  result.finish();
}

}  // namespace lowcomm::kernels::cuda_backend

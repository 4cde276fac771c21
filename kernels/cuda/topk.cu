// Top-k by magnitude on the device (topk.hpp's order: larger |value| first, NaN above everything,
// ties by lower index), per block and over a whole span: bitwise the Reference's selection, as
// kernels/kokkos/topk.cpp's.
//
// Both functions work on a sort key that is unique per entry and orders like the selection: the
// magnitude key inverted (so smaller comes first) above the entry's index. The first k entries
// are then simply the k smallest sort keys, in ascending order, and no tie needs separate care.
//  - Per block, up to 4096 entries (DeMo's 64x64 chunks): one CUDA block per lowcomm block sorts
//    the block's sort keys in registers and shared memory (cub::BlockRadixSort) and writes the
//    first k. Blocks of a warp's worth of entries or fewer, and blocks too large for one CUDA
//    block's sort, take the Kokkos kernel's insertion selection, one thread per block.
//  - Global: a radix select of the k-th sort key (8-bit histograms on the device, most
//    significant digit first, each digit picked on the host), then the k entries up to it are
//    compacted, sorted (cub::DeviceRadixSort) and written.
#include <cooperative_groups.h>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <string>

#include "cuda_memory.cuh"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// The selection order as an integer (as kernels/topk_order.hpp): the bits of |v|, every NaN the one
// key above +inf's.
constexpr std::uint32_t kNanKey = 0x7F800001u;

__device__ inline std::uint32_t magnitude_key(float v) {
  const std::uint32_t magnitude = bits_of(v) & 0x7FFFFFFFu;
  return magnitude < kNanKey ? magnitude : kNanKey;
}

// kNanKey - key, the magnitude key inverted so that the first in the order is the smallest,
// takes 31 bits: it is at most kNanKey < 2^31.
constexpr int kMagnitudeBits = 31;

// The sort key of entry `index` (below 2^index_bits): smaller exactly when the entry comes first
// in the order (larger magnitude, then lower index). Distinct for distinct indices.
__device__ inline std::uint64_t sort_key(float v, std::uint64_t index, int index_bits) {
  return (static_cast<std::uint64_t>(kNanKey - magnitude_key(v)) << index_bits) | index;
}

// ---- topk_per_block ----------------------------------------------------------------------------

// Blocks of at most this many entries take the insertion selection: a CUDA block of kThreads
// for them would leave most of its threads idle, and O(block · k) is at most a warp's worth
// squared.
constexpr std::int64_t kLargestInsertionBlock = 32;
// The largest block one CUDA block sorts: kThreads threads holding 16 keys each, 32 KiB of
// keys in the sort's shared memory.
constexpr int kMostItemsPerThread = 16;
constexpr std::int64_t kLargestSortedBlock = std::int64_t{kThreads} * kMostItemsPerThread;

// One thread per block: the insertion selection of kernels/kokkos/topk.cpp, kept in order in
// the output slots themselves (O(block · k), no scratch memory). An entry enters when it comes
// before the last kept one; since entries arrive in index order, an equal key never displaces an
// earlier one.
__global__ void insertion_select_blocks(const float* values, std::int64_t blocks, std::int64_t block_size,
                                        std::int64_t kept, std::int64_t* indices, float* selected) {
  for (std::int64_t b = first_item(); b < blocks; b += item_stride()) {
    const float* block = values + b * block_size;
    std::int64_t* idx = indices + b * kept;
    float* sel = selected + b * kept;
    std::int64_t count = 0;
    for (std::int64_t e = 0; e < block_size; ++e) {
      const std::uint32_t key = magnitude_key(block[e]);
      if (count == kept && key <= magnitude_key(sel[kept - 1])) continue;
      std::int64_t at = count < kept ? count++ : kept - 1;
      while (at > 0 && magnitude_key(sel[at - 1]) < key) {  // strictly: ties keep the earlier
        idx[at] = idx[at - 1];
        sel[at] = sel[at - 1];
        --at;
      }
      idx[at] = e;
      sel[at] = block[e];
    }
  }
}

// One CUDA block per lowcomm block (grid-stride over the blocks): its block_size sort keys, padded
// to kThreads · kItems, sorted whole; the first `kept` are the selection in order. The padding is
// all ones, above every real key in the sorted bits (whose magnitude field is at most kNanKey,
// never all ones), so it sorts last; block_size >= kept leaves it out of the output.
template <int kItems>
__global__ void __launch_bounds__(kThreads)
    sort_select_blocks(const float* values, std::int64_t blocks, std::int64_t block_size, std::int64_t kept,
                       int index_bits, std::int64_t* indices, float* selected) {
  using BlockSort = cub::BlockRadixSort<std::uint64_t, kThreads, kItems>;
  static_assert(sizeof(typename BlockSort::TempStorage) <= 48 * 1024, "beyond static shared memory");
  __shared__ typename BlockSort::TempStorage scratch;
  constexpr std::uint64_t kPadding = ~std::uint64_t{0};
  const std::uint64_t index_mask = (std::uint64_t{1} << index_bits) - 1;
  const int thread = static_cast<int>(threadIdx.x);
  for (std::int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const float* block = values + b * block_size;
    // Striped (entry j·kThreads + thread), so that a warp loads consecutive floats: the keys are
    // distinct, so how they are laid out before the sort does not change its result.
    std::uint64_t keys[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int e = j * kThreads + thread;
      keys[j] = e < block_size ? sort_key(block[e], static_cast<std::uint64_t>(e), index_bits) : kPadding;
    }
    BlockSort(scratch).SortBlockedToStriped(keys, 0, kMagnitudeBits + index_bits);
    // keys[j] is now the (j·kThreads + thread)-th in the order.
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int rank = j * kThreads + thread;
      if (rank < kept) {
        const auto e = static_cast<std::int64_t>(keys[j] & index_mask);
        indices[b * kept + rank] = e;
        selected[b * kept + rank] = block[e];
      }
    }
    __syncthreads();  // the next block's sort reuses `scratch`
  }
}

// ---- topk_global -------------------------------------------------------------------------------

// Indices below 2^31 (topk_global's limit) take 31 bits of the sort key: 62 bits in all.
constexpr int kGlobalIndexBits = 31;
constexpr int kGlobalKeyBits = kMagnitudeBits + kGlobalIndexBits;
constexpr int kDigitBits = 8;
constexpr int kDigits = 1 << kDigitBits;
static_assert(kThreads == kDigits, "count_digits gives each thread one bin");

// The bits from `bit` up, none when bit is 64.
__host__ __device__ constexpr std::uint64_t bits_from(int bit) {
  return bit >= 64 ? 0 : ~((std::uint64_t{1} << bit) - 1);
}

// histogram[d] += the entries whose sort key has `prefix`'s digits above `shift` and digit d at
// `shift`. Counted per CUDA block in shared memory first, so the device histogram takes at
// most one atomic per bin and block.
__global__ void count_digits(const float* values, std::int64_t n, std::uint64_t prefix, int shift,
                             unsigned* histogram) {
  __shared__ unsigned bins[kDigits];
  bins[threadIdx.x] = 0;
  __syncthreads();
  const std::uint64_t fixed = bits_from(shift + kDigitBits);
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const std::uint64_t key = sort_key(values[i], static_cast<std::uint64_t>(i), kGlobalIndexBits);
    if ((key & fixed) == prefix) atomicAdd(&bins[(key >> shift) & (kDigits - 1)], 1u);
  }
  __syncthreads();
  if (bins[threadIdx.x] != 0) atomicAdd(&histogram[threadIdx.x], bins[threadIdx.x]);
}

// chosen[0, kept) = the sort keys up to `threshold`, in no particular order (they are sorted
// next, and distinct). One atomic per warp's worth of chosen entries reserves their slots.
__global__ void collect_chosen(const float* values, std::int64_t n, std::uint64_t threshold, unsigned* taken,
                               std::uint64_t* chosen) {
  namespace cg = cooperative_groups;
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const std::uint64_t key = sort_key(values[i], static_cast<std::uint64_t>(i), kGlobalIndexBits);
    if (key <= threshold) {
      const cg::coalesced_group group = cg::coalesced_threads();
      unsigned first = 0;
      if (group.thread_rank() == 0) first = atomicAdd(taken, static_cast<unsigned>(group.num_threads()));
      first = group.shfl(first, 0);
      chosen[first + group.thread_rank()] = key;
    }
  }
}

__global__ void write_chosen(const std::uint64_t* sorted, const float* values, std::int64_t kept,
                             std::int64_t* indices, float* selected) {
  constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kGlobalIndexBits) - 1;
  for (std::int64_t j = first_item(); j < kept; j += item_stride()) {
    const auto i = static_cast<std::int64_t>(sorted[j] & kIndexMask);
    indices[j] = i;
    selected[j] = values[i];
  }
}

}  // namespace

void topk_per_block(std::span<const float> values, std::int64_t block_size, std::int64_t kept,
                    std::span<std::int64_t> indices, std::span<float> selected) {
  const Input<float> in(values);
  Output<std::int64_t> index_out(indices);
  Output<float> value_out(selected);
  const std::int64_t blocks = static_cast<std::int64_t>(values.size()) / block_size;
  // Blocks beyond DeMo's sizes fall back on the insertion selection too: exact, but O(block · k)
  // on one thread per block, so slow when a few huge blocks leave the device mostly idle.
  if (block_size <= kLargestInsertionBlock || block_size > kLargestSortedBlock) {
    launch("topk_per_block (insertion)", insertion_select_blocks, blocks, in.data(), blocks, block_size, kept,
           index_out.data(), value_out.data());
  } else {
    // Just enough bits for the indices within a block; the sort looks at no others.
    const int index_bits = std::bit_width(static_cast<std::uint64_t>(block_size - 1));
    // One CUDA block of kThreads per lowcomm block: launch() sizes the grid in threads.
    const std::int64_t threads = blocks * kThreads;
    if (block_size <= kThreads) {
      launch("topk_per_block (sort)", sort_select_blocks<1>, threads, in.data(), blocks, block_size, kept,
             index_bits, index_out.data(), value_out.data());
    } else if (block_size <= 4 * kThreads) {
      launch("topk_per_block (sort)", sort_select_blocks<4>, threads, in.data(), blocks, block_size, kept,
             index_bits, index_out.data(), value_out.data());
    } else {
      launch("topk_per_block (sort)", sort_select_blocks<kMostItemsPerThread>, threads, in.data(), blocks,
             block_size, kept, index_bits, index_out.data(), value_out.data());
    }
  }
  index_out.finish();
  value_out.finish();
}

// The k-th sort key by a radix select, then every entry up to it. With the index in the sort key
// no key repeats, so the selection is a plain comparison and the entries are collected in any
// order: no device-wide scan, nor its n-sized flags and offsets, as Kokkos's selection of ties in
// index order needs. The select stops as soon as a digit's bucket holds exactly the rest of the
// selection: with distinct magnitudes, after the magnitude key's four digits, as Kokkos's four
// passes; ties at the k-th magnitude cost up to four more, over the index.
void topk_global(std::span<const float> values, std::int64_t kept, std::span<std::int64_t> indices,
                 std::span<float> selected) {
  const auto n = static_cast<std::int64_t>(values.size());
  if (n >= (std::int64_t{1} << kGlobalIndexBits)) {
    throw Error("topk_global: " + std::to_string(n) +
                " values; the cuda backend selects among fewer than 2^31");
  }
  const Input<float> in(values);

  // Invariant: `before` entries come before the k-th; `in_bucket` share its digits above `shift`,
  // the ones `prefix` holds; before < kept <= before + in_bucket. Done when the bucket is exactly
  // the rest of the selection (by shift 0 at the latest: a single key is left in the bucket).
  int shift = 64;
  std::uint64_t prefix = 0;
  std::int64_t before = 0, in_bucket = n;
  DeviceBuffer<unsigned> histogram(kDigits);
  std::array<unsigned, kDigits> counts{};
  while (before + in_bucket != kept) {
    shift -= kDigitBits;
    check(cudaMemsetAsync(histogram.data(), 0, sizeof counts, stream()), "cudaMemsetAsync (topk_global histogram)");
    launch("topk_global (histogram)", count_digits, n, in.data(), n, prefix, shift, histogram.data());
    check(cudaMemcpyAsync(counts.data(), histogram.data(), sizeof counts, cudaMemcpyDeviceToHost, stream()),
          "cudaMemcpyAsync (topk_global histogram)");
    synchronize("the topk_global histogram");
    int digit = 0;
    while (before + counts[digit] < kept) before += counts[digit++];
    in_bucket = counts[digit];
    prefix |= static_cast<std::uint64_t>(digit) << shift;
  }
  const std::uint64_t threshold = prefix | ~bits_from(shift);  // the bucket's largest key

  DeviceBuffer<unsigned> taken(1);
  check(cudaMemsetAsync(taken.data(), 0, sizeof(unsigned), stream()), "cudaMemsetAsync (topk_global count)");
  DeviceBuffer<std::uint64_t> chosen(static_cast<std::size_t>(kept));
  launch("topk_global (collect)", collect_chosen, n, in.data(), n, threshold, taken.data(), chosen.data());

  DeviceBuffer<std::uint64_t> sorted(static_cast<std::size_t>(kept));
  std::size_t scratch_bytes = 0;
  check(cub::DeviceRadixSort::SortKeys(nullptr, scratch_bytes, chosen.data(), sorted.data(), kept, 0, kGlobalKeyBits,
                                       stream()),
        "cub::DeviceRadixSort::SortKeys (scratch size)");
  // Never a null pointer: with one, CUB would only report the size again.
  DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(scratch_bytes, 1));
  check(cub::DeviceRadixSort::SortKeys(scratch.data(), scratch_bytes, chosen.data(), sorted.data(), kept, 0,
                                       kGlobalKeyBits, stream()),
        "cub::DeviceRadixSort::SortKeys");

  Output<std::int64_t> index_out(indices);
  Output<float> value_out(selected);
  launch("topk_global (write)", write_chosen, kept, sorted.data(), in.data(), kept, index_out.data(),
         value_out.data());
  index_out.finish();
  value_out.finish();
}

}  // namespace lowcomm::kernels::cuda_backend

// topk.hpp on the Cpu backend: bitwise the Reference's selection, found without sorting the span.
#include <omp.h>

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <vector>

#include "../backend_kernels.hpp"
#include "../elementwise_rules.hpp"
#include "../topk_order.hpp"
#include "block_topk.hpp"
#include "lowcomm/core/simd_clones.hpp"

namespace lowcomm::kernels::cpu_backend {

using detail::Candidate;
using detail::comes_before;
using detail::magnitude_key;
using detail::write_selection;

namespace {

// Elements below which the Cpu backend stays on one thread: a block scan costs about a
// nanosecond per element, less than waking the OpenMP team for small inputs.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 15;

// ---- Cpu: a threshold pass, then an exact selection among the few entries above it ----------
//
// Cut the range into G >= k groups and take each group's largest key; let t be the k-th largest
// of those G maxima. k groups have a maximum >= t, so at least k entries have a key >= t, and
// every entry of the selection does too. The candidates, all entries with key >= t (ties at t
// included, so the index order among equal keys survives), are then ordered exactly. With about
// 4k groups, random data leaves a little over k candidates: the two passes are branch-free
// integer loops over the values (vectorised, in SIMD clones), and the sort touches only the
// candidates. Where ties make most entries candidates (all keys equal), the candidates are
// pruned to the best k as they grow, so the cost stays about one sort of a few k.
//
// The result does not depend on how the groups are cut, only on the order (the candidate set
// always contains the true first k), so it is bitwise the Reference's.

LOWCOMM_SIMD_CLONES
void group_maxima(const float* values, std::int64_t n, std::int64_t group, std::uint32_t* maxima) {
  const std::int64_t full = n / group;
  for (std::int64_t g = 0; g < full; ++g) {
    const float* first = values + g * group;
    std::uint32_t best = 0;
    for (std::int64_t i = 0; i < group; ++i) best = std::max(best, magnitude_key(first[i]));
    maxima[g] = best;
  }
  if (full * group < n) {
    std::uint32_t best = 0;
    for (std::int64_t i = full * group; i < n; ++i) best = std::max(best, magnitude_key(values[i]));
    maxima[full] = best;
  }
}

// group_maxima of corrected = decay·residual + gradient, written as it is formed (scaled_sum:
// bit for bit scale_add's element).
LOWCOMM_SIMD_CLONES
void corrected_group_maxima(float decay, const float* residual, const float* gradient, float* corrected,
                            std::int64_t n, std::int64_t group, std::uint32_t* maxima) {
  const auto max_of = [&](std::int64_t first, std::int64_t last) {
    std::uint32_t best = 0;
    for (std::int64_t i = first; i < last; ++i) {
      const float value = scaled_sum(decay, residual[i], gradient[i]);
      corrected[i] = value;
      best = std::max(best, magnitude_key(value));
    }
    return best;
  };
  const std::int64_t full = n / group;
  for (std::int64_t g = 0; g < full; ++g) maxima[g] = max_of(g * group, (g + 1) * group);
  if (full * group < n) maxima[full] = max_of(full * group, n);
}

// Appends {key, offset + i} for every i with key >= threshold. Candidates are rare (a little over
// k of the n values for random data), so the values are tested 16 at a time with a vectorised
// reduction and only the runs that hold one are walked entry by entry.
LOWCOMM_SIMD_CLONES
void collect_candidates(const float* values, std::int64_t n, std::int64_t offset, std::uint32_t threshold,
                        std::vector<Candidate>& candidates) {
  constexpr std::int64_t kRun = 16;
  std::int64_t i = 0;
  for (; i + kRun <= n; i += kRun) {
    bool any = false;
    for (std::int64_t j = 0; j < kRun; ++j) any |= magnitude_key(values[i + j]) >= threshold;
    if (!any) continue;
    for (std::int64_t j = i; j < i + kRun; ++j) {
      const std::uint32_t key = magnitude_key(values[j]);
      if (key >= threshold) candidates.push_back({key, offset + j});
    }
  }
  for (; i < n; ++i) {
    const std::uint32_t key = magnitude_key(values[i]);
    if (key >= threshold) candidates.push_back({key, offset + i});
  }
}

// The k-th largest of n keys (1 <= k <= n): the largest key that at least k keys are >= to (any
// larger key has at most k - 1 keys >= it). n² comparisons, vectorised and branch-free: for the
// 128 group maxima of a block at k = 32, faster than std::nth_element, whose partitioning
// mispredicts about every other branch on random keys; at 256 maxima no longer.
LOWCOMM_SIMD_CLONES
std::uint32_t kth_largest_by_counting(const std::uint32_t* keys, std::int64_t n, std::int64_t k) {
  std::uint32_t kth = 0;
  for (std::int64_t g = 0; g < n; ++g) {
    const std::uint32_t key = keys[g];
    std::uint32_t at_least = 0;
    for (std::int64_t other = 0; other < n; ++other) at_least += keys[other] >= key ? 1u : 0u;
    kth = at_least >= static_cast<std::uint32_t>(k) ? std::max(kth, key) : kth;
  }
  return kth;
}

// Group maxima up to which select_range counts (and then scans only the groups that can hold a
// candidate).
constexpr std::int64_t kCountingMaxima = 128;

// Values collected at a time between prunings of the candidates (select_range).
constexpr std::int64_t kPiece = std::int64_t{1} << 16;

// Per-thread buffers of select_range, reused across calls.
struct SelectScratch {
  std::vector<std::uint32_t> maxima;
  std::vector<Candidate> candidates;  // ends up holding the selection, in order
  std::vector<Candidate> sorted;      // the radix sort's other buffer
};

// Candidates above which a radix sort beats std::sort (whose comparisons of random keys
// mispredict): a global top-k of 1 % of a large tensor sorts hundreds of thousands.
constexpr std::size_t kRadixCandidates = 4096;

// Sorts candidates that are in ascending index order into selection order: a stable
// least-significant-digit radix sort on the key, largest first, so equal keys keep their index
// order. Byte passes in which every key has the same digit are skipped.
void radix_sort_into_order(std::vector<Candidate>& candidates, std::vector<Candidate>& other) {
  other.resize(candidates.size());
  for (int shift = 0; shift < 32; shift += 8) {
    std::array<std::size_t, 257> starts{};
    for (const Candidate& c : candidates) ++starts[((~c.key >> shift) & 0xFFu) + 1];
    if (std::ranges::find(starts, candidates.size()) != starts.end()) continue;  // one digit only
    for (std::size_t d = 1; d < starts.size(); ++d) starts[d] += starts[d - 1];
    for (const Candidate& c : candidates) other[starts[(~c.key >> shift) & 0xFFu]++] = c;
    candidates.swap(other);
  }
}

// Error feedback's correction, formed by select_range as it reads the values: corrected[i] ←
// decay·residual[i] + gradient[i], where `corrected` is the memory of the values selected from
// (and may be `residual` itself).
struct Correction {
  float decay;
  const float* residual;
  const float* gradient;
  float* corrected;
};

// scratch.candidates ends up holding the first min(k, end - begin) entries of
// values[begin, end) in selection order, indices offset by `begin`. With a correction, that range
// of `values` is formed first, in the pass that takes the group maxima.
void select_range(std::span<const float> values, std::int64_t begin, std::int64_t end, std::int64_t k,
                  SelectScratch& scratch, const Correction* correction = nullptr) {
  const std::int64_t n = end - begin;
  const float* range = values.data() + begin;
  std::vector<Candidate>& candidates = scratch.candidates;
  candidates.clear();
  k = std::min(k, n);
  if (k <= 0) return;
  const std::int64_t group = std::max<std::int64_t>(1, n / (4 * k));
  const std::int64_t groups = (n + group - 1) / group;
  scratch.maxima.resize(static_cast<std::size_t>(groups));
  if (correction != nullptr) {
    corrected_group_maxima(correction->decay, correction->residual + begin, correction->gradient + begin,
                           correction->corrected + begin, n, group, scratch.maxima.data());
  } else {
    group_maxima(range, n, group, scratch.maxima.data());
  }
  // Room for every candidate up to the pruning below, reserved once per scratch: growing by
  // doubling would copy them and fault in fresh pages, call after call.
  candidates.reserve(std::min(static_cast<std::size_t>(n), 2 * static_cast<std::size_t>(k + kPiece)));
  // The k-th largest maximum (groups >= k: group <= n / k).
  std::uint32_t threshold = 0;
  if (groups <= kCountingMaxima) {
    threshold = kth_largest_by_counting(scratch.maxima.data(), groups, k);
  } else {
    const auto kth = scratch.maxima.begin() + (k - 1);
    std::nth_element(scratch.maxima.begin(), kth, scratch.maxima.end(), std::greater<>());
    threshold = *kth;
  }
  // Collected piece by piece: when ties leave too many candidates (an all-zero gradient makes
  // every entry one), the best k so far are kept and the threshold rises above the worst of them.
  // Later entries equal to it come after it in the order, so none of the selection is lost, and
  // the candidates never take more than 2k + 2·kPiece entries.
  const auto keep = static_cast<std::size_t>(k);
  const std::size_t limit = 2 * keep + static_cast<std::size_t>(kPiece);
  const auto first_k = [&] {
    std::nth_element(candidates.begin(), candidates.begin() + (k - 1), candidates.end(), comes_before);
    candidates.resize(keep);
  };
  bool in_index_order = true;  // as collected, until a pruning reorders them
  const auto collect = [&](std::int64_t start, std::int64_t count) {
    collect_candidates(range + start, count, begin + start, threshold, candidates);
    if (candidates.size() > limit) {
      first_k();
      in_index_order = false;
      threshold = candidates[keep - 1].key + 1;  // nth_element put the worst kept one last
    }
  };
  if (groups <= kCountingMaxima && group <= kPiece) {
    // The maxima are still in group order (counting does not move them), and only a group whose
    // maximum reaches the threshold can hold a candidate: about k of the 4k groups are scanned.
    for (std::int64_t g = 0; g < groups; ++g) {
      if (scratch.maxima[static_cast<std::size_t>(g)] >= threshold) collect(g * group, std::min(group, n - g * group));
    }
  } else {
    for (std::int64_t start = 0; start < n; start += kPiece) collect(start, std::min(kPiece, n - start));
  }
  if (in_index_order && candidates.size() > kRadixCandidates) {
    radix_sort_into_order(candidates, scratch.sorted);
    candidates.resize(std::min(candidates.size(), keep));
    return;
  }
  if (candidates.size() > keep) first_k();
  std::sort(candidates.begin(), candidates.end(), comes_before);
}

}  // namespace

struct BlockSelector::Buffers {
  SelectScratch scratch;
};

BlockSelector::BlockSelector() : buffers_(std::make_unique<Buffers>()) {}
BlockSelector::~BlockSelector() = default;

void BlockSelector::select(std::span<const float> block, std::int64_t k, std::int64_t* indices, float* selected) {
  select_range(block, 0, static_cast<std::int64_t>(block.size()), k, buffers_->scratch);
  write_selection(block, buffers_->scratch.candidates, indices, selected);
}

void topk_per_block(std::span<const float> values, std::int64_t block_size, std::int64_t k,
                    std::span<std::int64_t> indices, std::span<float> selected) {
  const std::int64_t blocks = static_cast<std::int64_t>(values.size()) / block_size;
#pragma omp parallel if (static_cast<std::int64_t>(values.size()) > kParallelElements)
  {
    BlockSelector selector;
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      selector.select(values.subspan(static_cast<std::size_t>(b * block_size), static_cast<std::size_t>(block_size)),
                      k, indices.data() + b * k, selected.data() + b * k);
    }
  }
}

namespace {

// Each thread selects the best k of its own contiguous range; the final answer is the first k
// of those lists merged, which does not depend on how the span was cut. With a correction, each
// thread forms its own range of `values` first.
void select_global(std::span<const float> values, std::int64_t k, std::span<std::int64_t> indices,
                   std::span<float> selected, const Correction* correction) {
  const auto n = static_cast<std::int64_t>(values.size());
  const std::int64_t ranges = std::clamp<std::int64_t>(n / kParallelElements, 1,
                                                       omp_get_max_threads());
  // Kept by the calling thread from call to call (their maxima and candidates run to megabytes
  // for a large tensor: fresh ones would fault in fresh pages every step). A reference, so that
  // the team's threads all use the caller's.
  thread_local std::vector<SelectScratch> kept_lists;
  std::vector<SelectScratch>& lists = kept_lists;
  if (lists.size() < static_cast<std::size_t>(ranges)) lists.resize(static_cast<std::size_t>(ranges));
#pragma omp parallel for schedule(static) num_threads(ranges) if (ranges > 1)
  for (std::int64_t p = 0; p < ranges; ++p) {
    const std::int64_t begin = (n / ranges) * p + std::min(p, n % ranges);
    const std::int64_t end = begin + n / ranges + (p < n % ranges ? 1 : 0);
    select_range(values, begin, end, k, lists[static_cast<std::size_t>(p)], correction);
  }
  if (ranges == 1) {
    write_selection(values, lists[0].candidates, indices.data(), selected.data());
    return;
  }
  std::vector<Candidate> merged = lists[0].candidates;
  for (std::size_t p = 1; p < static_cast<std::size_t>(ranges); ++p) {
    const std::vector<Candidate>& list = lists[p].candidates;
    const auto middle = static_cast<std::ptrdiff_t>(merged.size());
    merged.insert(merged.end(), list.begin(), list.end());
    std::inplace_merge(merged.begin(), merged.begin() + middle, merged.end(), comes_before);
    merged.resize(std::min(merged.size(), static_cast<std::size_t>(k)));
  }
  write_selection(values, merged, indices.data(), selected.data());
}

}  // namespace

void topk_global(std::span<const float> values, std::int64_t k, std::span<std::int64_t> indices,
                 std::span<float> selected) {
  select_global(values, k, indices, selected, nullptr);
}

void corrected_topk_global(float decay, std::span<const float> residual, std::span<const float> gradient,
                           std::span<float> corrected, std::int64_t kept, std::span<std::int64_t> indices,
                           std::span<float> selected) {
  const Correction correction{decay, residual.data(), gradient.data(), corrected.data()};
  select_global(corrected, kept, indices, selected, &correction);
}

}  // namespace lowcomm::kernels::cpu_backend

// Top-k by magnitude (topk.hpp's order: larger |value| first, NaN above everything, ties by lower
// index), per block and over a whole span.
#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>


#include <fmt/format.h>

#include "kokkos_views.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::kokkos_backend {

namespace {

// The selection order as an integer (as kernels/topk_order.hpp): the bits of |v|, every NaN the one
// key above +inf's.
constexpr std::uint32_t kNanKey = 0x7F800001u;

KOKKOS_INLINE_FUNCTION std::uint32_t magnitude_key(float v) { return smaller<std::uint32_t>(bits_of(v) & 0x7FFFFFFFu, kNanKey); }

}  // namespace

// One block per work item: an insertion selection of its k entries, kept in order in the output
// slots themselves (O(block · k), no scratch memory). An entry enters when it comes before the
// last kept one; since entries arrive in index order, an equal key never displaces an earlier one.
void topk_per_block(std::span<const float> values, std::int64_t block_size, std::int64_t kept,
                    std::span<std::int64_t> indices, std::span<float> selected) {
  const auto in = input(values);
  Output<std::int64_t> index_out(indices);
  Output<float> value_out(selected);
  const auto idx = index_out.view();
  const auto sel = value_out.view();
  const std::int64_t blocks = static_cast<std::int64_t>(values.size()) / block_size;
  Kokkos::parallel_for("lowcomm::topk_per_block", Range(0, blocks), KOKKOS_LAMBDA(const std::int64_t b) {
    const std::int64_t base = b * block_size, out = b * kept;
    std::int64_t count = 0;
    for (std::int64_t e = 0; e < block_size; ++e) {
      const std::uint32_t key = magnitude_key(in(base + e));
      if (count == kept && key <= magnitude_key(sel(out + kept - 1))) continue;
      std::int64_t at = count < kept ? count++ : kept - 1;
      while (at > 0 && magnitude_key(sel(out + at - 1)) < key) {  // strictly: ties keep the earlier
        idx(out + at) = idx(out + at - 1);
        sel(out + at) = sel(out + at - 1);
        --at;
      }
      idx(out + at) = e;
      sel(out + at) = in(base + e);
    }
  });
  index_out.finish();
  value_out.finish();
}

// The whole span: the k-th largest key by a radix select (four passes of 8-bit histograms, most
// significant byte first), then every entry above that key and the first ones equal to it in
// index order, sorted by (key descending, index ascending) as one 64-bit sort key.
void topk_global(std::span<const float> values, std::int64_t kept, std::span<std::int64_t> indices,
                 std::span<float> selected) {
  const auto n = static_cast<std::int64_t>(values.size());
  if (n >= (std::int64_t{1} << 31)) {
    throw Error(fmt::format("topk_global: {} values; the kokkos backend selects among fewer than 2^31", n));
  }
  const auto in = input(values);
  // Radix select: `prefix` holds the bytes of the k-th key fixed so far; `above` counts the keys
  // known to be larger.
  std::uint32_t prefix = 0;
  std::int64_t above = 0;
  Kokkos::View<std::int64_t[256], MemorySpace> histogram("lowcomm::topk_global::histogram");
  for (int shift = 24; shift >= 0; shift -= 8) {
    Kokkos::deep_copy(histogram, 0);
    const std::uint32_t mask = shift == 24 ? 0u : ~((std::uint32_t{1} << (shift + 8)) - 1);
    const std::uint32_t fixed = prefix;
    Kokkos::parallel_for("lowcomm::topk_global::histogram", Range(0, n), KOKKOS_LAMBDA(const std::int64_t i) {
      const std::uint32_t key = magnitude_key(in(i));
      if ((key & mask) == fixed) Kokkos::atomic_add(&histogram((key >> shift) & 0xFF), std::int64_t{1});
    });
    const auto counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), histogram);
    int digit = 255;
    while (above + counts(digit) < kept) above += counts(digit--);
    prefix |= static_cast<std::uint32_t>(digit) << shift;
  }
  const std::uint32_t threshold = prefix;
  const std::int64_t ties = kept - above;  // entries equal to the threshold that make the cut

  // Positions: entries above the threshold, then the first `ties` equal to it, in index order.
  Kokkos::View<std::uint64_t*, MemorySpace> chosen("lowcomm::topk_global::chosen", static_cast<std::size_t>(kept));
  // One scan counts both kinds: entries above the threshold in the high 32 bits, ties in the low.
  constexpr std::uint64_t kAboveOne = std::uint64_t{1} << 32;
  Kokkos::parallel_scan("lowcomm::topk_global::collect", Range(0, n),
                        KOKKOS_LAMBDA(const std::int64_t i, std::uint64_t& seen, const bool last) {
                          const std::uint32_t key = magnitude_key(in(i));
                          const bool is_above = key > threshold, is_tie = key == threshold;
                          if (last) {
                            const auto seen_above = static_cast<std::int64_t>(seen >> 32);
                            const auto seen_ties = static_cast<std::int64_t>(seen & 0xFFFFFFFFu);
                            std::int64_t slot = -1;
                            if (is_above) slot = seen_above;
                            if (is_tie && seen_ties < ties) slot = above + seen_ties;
                            // Sort key: larger magnitude first, then lower index.
                            if (slot >= 0) {
                              chosen(slot) = (static_cast<std::uint64_t>(0xFFFFFFFFu - key) << 32) |
                                             static_cast<std::uint64_t>(i);
                            }
                          }
                          seen += (is_above ? kAboveOne : 0) + (is_tie ? 1 : 0);
                        });
  Kokkos::sort(chosen);
  Output<std::int64_t> index_out(indices);
  Output<float> value_out(selected);
  const auto idx = index_out.view();
  const auto sel = value_out.view();
  Kokkos::parallel_for("lowcomm::topk_global::write", Range(0, kept), KOKKOS_LAMBDA(const std::int64_t j) {
    const auto i = static_cast<std::int64_t>(chosen(j) & 0xFFFFFFFFu);
    idx(j) = i;
    sel(j) = in(i);
  });
  index_out.finish();
  value_out.finish();
}

}  // namespace lowcomm::kernels::kokkos_backend

#include "lowcomm/kernels/topk.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "correction_checks.hpp"
#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {

constexpr std::string_view kPerBlock = "topk_per_block";
constexpr std::string_view kGlobal = "topk_global";
constexpr std::string_view kCorrected = "corrected_topk_global";

void check_outputs(std::string_view kernel, std::int64_t expected,
                   std::span<std::int64_t> indices, std::span<float> selected) {
  const auto want = static_cast<std::size_t>(expected);
  if (indices.size() != want || selected.size() != want) {
    throw Error(fmt::format("{}: the output spans must hold exactly {} entries, got {} indices "
                            "and {} values", kernel, expected, indices.size(), selected.size()));
  }
}

}  // namespace

void topk_per_block(Backend backend, std::span<const float> values, std::int64_t block_size,
                    std::int64_t k, std::span<std::int64_t> indices, std::span<float> selected) {
  if (block_size < 1) {
    throw Error(fmt::format("{}: block_size {} must be >= 1", kPerBlock, block_size));
  }
  if (static_cast<std::int64_t>(values.size()) % block_size != 0) {
    throw Error(fmt::format("{}: {} values are not a whole number of blocks of {}", kPerBlock,
                            values.size(), block_size));
  }
  const std::int64_t kept = std::clamp<std::int64_t>(k, 1, block_size);
  const std::int64_t blocks = static_cast<std::int64_t>(values.size()) / block_size;
  check_outputs(kPerBlock, blocks * kept, indices, selected);
  LOWCOMM_DISPATCH(backend, topk_per_block, values, block_size, kept, indices, selected);
}

void topk_global(Backend backend, std::span<const float> values, std::int64_t k,
                 std::span<std::int64_t> indices, std::span<float> selected) {
  if (values.empty()) throw Error(fmt::format("{}: no values to select from", kGlobal));
  const auto n = static_cast<std::int64_t>(values.size());
  const std::int64_t kept = std::clamp<std::int64_t>(k, 1, n);
  check_outputs(kGlobal, kept, indices, selected);
  LOWCOMM_DISPATCH(backend, topk_global, values, kept, indices, selected);
}

void corrected_topk_global(Backend backend, float decay, std::span<const float> residual,
                           std::span<const float> gradient, std::span<float> corrected, std::int64_t k,
                           std::span<std::int64_t> indices, std::span<float> selected) {
  if (gradient.empty()) throw Error(fmt::format("{}: no values to select from", kCorrected));
  detail::check_correction(kCorrected, residual, gradient, corrected);
  const std::int64_t kept = std::clamp<std::int64_t>(k, 1, static_cast<std::int64_t>(gradient.size()));
  check_outputs(kCorrected, kept, indices, selected);
  LOWCOMM_DISPATCH(backend, corrected_topk_global, decay, residual, gradient, corrected, kept, indices, selected);
}

}  // namespace lowcomm::kernels

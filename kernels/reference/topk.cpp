// topk.hpp's definition: sort everything by the selection order, keep the first k.
#include <algorithm>
#include <vector>

#include "../backend_kernels.hpp"
#include "../elementwise_rules.hpp"
#include "../topk_order.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

void select(std::span<const float> values, std::int64_t k, std::int64_t* indices, float* selected) {
  std::vector<detail::Candidate> all(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    all[i] = {detail::magnitude_key(values[i]), static_cast<std::int64_t>(i)};
  }
  std::sort(all.begin(), all.end(), detail::comes_before);
  detail::write_selection(values, std::span(all).first(static_cast<std::size_t>(k)), indices, selected);
}

}  // namespace

void topk_per_block(std::span<const float> values, std::int64_t block_size, std::int64_t kept,
                    std::span<std::int64_t> indices, std::span<float> selected) {
  const std::int64_t blocks = static_cast<std::int64_t>(values.size()) / block_size;
  for (std::int64_t b = 0; b < blocks; ++b) {
    select(values.subspan(static_cast<std::size_t>(b * block_size), static_cast<std::size_t>(block_size)), kept,
           indices.data() + b * kept, selected.data() + b * kept);
  }
}

void topk_global(std::span<const float> values, std::int64_t kept, std::span<std::int64_t> indices,
                 std::span<float> selected) {
  select(values, kept, indices.data(), selected.data());
}

void corrected_topk_global(float decay, std::span<const float> residual, std::span<const float> gradient,
                           std::span<float> corrected, std::int64_t kept, std::span<std::int64_t> indices,
                           std::span<float> selected) {
  for (std::size_t i = 0; i < corrected.size(); ++i) corrected[i] = scaled_sum(decay, residual[i], gradient[i]);
  select(corrected, kept, indices.data(), selected.data());
}

}  // namespace lowcomm::kernels::reference_backend

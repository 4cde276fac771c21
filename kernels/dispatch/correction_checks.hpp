#pragma once
// The argument checks of the kernels that form error feedback's correction, decay·residual +
// gradient, in their first pass (corrected_topk_global, corrected_quantize;
// compress/fused_correction.hpp): the three spans have one size, and `corrected`, written while
// both inputs are read, may be the residual itself (each element is read before it is written)
// but no part of either.
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::detail {

inline void check_correction(std::string_view kernel, std::span<const float> residual,
                             std::span<const float> gradient, std::span<const float> corrected) {
  if (residual.size() != gradient.size() || corrected.size() != gradient.size()) {
    throw Error(fmt::format("{}: residual, gradient and corrected must have one size, got {}, {} and {}", kernel,
                            residual.size(), gradient.size(), corrected.size()));
  }
  if (!(residual.data() == corrected.data() || apart(residual, corrected)) || !apart(gradient, corrected)) {
    throw Error(fmt::format("{}: corrected overlaps an input without being the residual itself", kernel));
  }
}

}  // namespace lowcomm::kernels::detail

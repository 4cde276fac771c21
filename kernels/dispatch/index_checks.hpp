#pragma once
// The data-dependent checks of the dispatch, run by the backend where the data lives
// (interface/index_checks.inc): the first value outside [0, limit), with its position. A backend
// this build lacks is refused in the name of `kernel`, the public kernel the check is for, as
// that kernel itself would be.
#include <cstdint>
#include <span>
#include <string_view>

#include "../backend_kernels.hpp"

namespace lowcomm::kernels::detail {

FirstOutside first_outside(Backend backend, std::string_view kernel, std::span<const std::int64_t> values,
                           std::int64_t limit);
FirstOutside first_outside(Backend backend, std::string_view kernel, std::span<const std::int32_t> values,
                           std::int64_t limit);

}  // namespace lowcomm::kernels::detail

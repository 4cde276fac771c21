#include "lowcomm/compress/unit.hpp"

namespace lowcomm {

std::int64_t UnitContext::numel() const { return numel_of(shape); }

}  // namespace lowcomm

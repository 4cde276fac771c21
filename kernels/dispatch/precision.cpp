#include "lowcomm/kernels/precision.hpp"

namespace lowcomm::kernels {

std::string_view to_string(Precision precision) { return precision == Precision::Bf16 ? "bf16" : "fp32"; }

std::optional<Precision> precision_named(std::string_view name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "bf16") return Precision::Bf16;
  return std::nullopt;
}

}  // namespace lowcomm::kernels

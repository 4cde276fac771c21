#include "lowcomm/kernels/backend.hpp"

#include <fmt/format.h>

#include "blas.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::Reference: return "reference";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

std::string_view cpu_matrix_products() { return detail::sgemm_provider(); }

void unsupported(std::string_view kernel, Backend backend) {
  throw Error(fmt::format("kernel {} has no {} implementation in this build", kernel, to_string(backend)));
}

}  // namespace lowcomm::kernels

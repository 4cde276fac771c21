#include "lowcomm/kernels/backend.hpp"

#include <fmt/format.h>

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

void unsupported(std::string_view kernel, Backend backend) {
  throw Error(fmt::format("kernel {} has no {} implementation in this build", kernel, to_string(backend)));
}

}  // namespace lowcomm::kernels

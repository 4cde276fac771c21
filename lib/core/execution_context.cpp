#include "lowcomm/core/execution_context.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Kokkos in builds with LOWCOMM_ENABLE_KOKKOS=ON, Cuda in builds with CUDA enabled.
constexpr std::array kAvailable{
    kernels::Backend::Reference, kernels::Backend::Cpu,
#if LOWCOMM_HAVE_KOKKOS
    kernels::Backend::Kokkos,
#endif
#if LOWCOMM_HAVE_CUDA
    kernels::Backend::Cuda,
#endif
};

}  // namespace

std::span<const kernels::Backend> available_backends() { return kAvailable; }

kernels::Backend backend_named(std::string_view name) {
  std::string names;
  for (const kernels::Backend backend : kAvailable) {
    if (kernels::to_string(backend) == name) {
      // Refused here rather than at the first kernel call, before a run has set anything up.
      if (const std::string reason = kernels::unavailable_reason(backend); !reason.empty()) {
        throw ConfigError(fmt::format("compute.backend=\"{}\" cannot run here: {}", name, reason));
      }
      return backend;
    }
    names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", kernels::to_string(backend));
  }
  throw ConfigError(fmt::format("compute backend \"{}\" is not in this build; it has {}", name, names));
}

}  // namespace lowcomm

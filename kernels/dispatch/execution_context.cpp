#include "lowcomm/kernels/execution_context.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"

namespace lowcomm {

namespace {

// Kokkos in builds with LOWCOMM_ENABLE_KOKKOS=ON, Cuda in builds with CUDA enabled.
std::vector<kernels::Backend> backends_in_this_build() {
  std::vector<kernels::Backend> built;
  for (const kernels::Backend backend : {kernels::Backend::Reference, kernels::Backend::Cpu, kernels::Backend::Kokkos,
                                         kernels::Backend::Cuda}) {
    if (kernels::in_this_build(backend)) built.push_back(backend);
  }
  return built;
}

}  // namespace

std::span<const kernels::Backend> available_backends() {
  static const std::vector<kernels::Backend> built = backends_in_this_build();
  return built;
}

kernels::Backend backend_named(std::string_view name) {
  std::string names;
  for (const kernels::Backend backend : available_backends()) {
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

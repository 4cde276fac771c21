#include "lowcomm/core/execution_context.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Backend::Cuda is declared for the device kernels to come; no kernel implements it yet, so it
// is not offered. Kokkos is, in builds with LOWCOMM_ENABLE_KOKKOS=ON.
#if LOWCOMM_HAVE_KOKKOS
constexpr std::array kAvailable{kernels::Backend::Reference, kernels::Backend::Cpu, kernels::Backend::Kokkos};
#else
constexpr std::array kAvailable{kernels::Backend::Reference, kernels::Backend::Cpu};
#endif

}  // namespace

std::span<const kernels::Backend> available_backends() { return kAvailable; }

kernels::Backend backend_named(std::string_view name) {
  std::string names;
  for (const kernels::Backend backend : kAvailable) {
    if (kernels::to_string(backend) == name) return backend;
    names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", kernels::to_string(backend));
  }
  throw ConfigError(fmt::format("compute backend \"{}\" is not in this build; it has {}", name, names));
}

}  // namespace lowcomm

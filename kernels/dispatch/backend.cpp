// The device-neutral questions about backends (lowcomm/kernels/backend.hpp), each answered by the
// backend itself through the dispatch, and the stubs' registry (../absent.hpp).
#include "lowcomm/kernels/backend.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "../absent.hpp"
#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {

// What not_built/ registers: every kernel and family of the backend.
constexpr std::string_view kWholeBackend = "*";

// What the stubs registered: (backend, kernel or family). Filled while the library's statics
// start; read afterwards.
struct AbsentRegistry {
  std::mutex mutex;
  std::vector<std::pair<Backend, std::string>> names;
};

AbsentRegistry& absent_registry() {
  static AbsentRegistry registry;
  return registry;
}

}  // namespace

std::string cpu_matrix_products() { return cpu_backend::description(); }
std::string kokkos_description() { return kokkos_backend::description(); }
std::string cuda_description() { return cuda_backend::description(); }

void place_on_node(const std::optional<LocalRank>& local_rank) {
  reference_backend::place_on_node(local_rank);
  cpu_backend::place_on_node(local_rank);
  kokkos_backend::place_on_node(local_rank);
  cuda_backend::place_on_node(local_rank);
}

std::string unavailable_reason(Backend backend) { return LOWCOMM_DISPATCH(backend, unavailable_reason); }

bool implements(Backend backend, std::string_view name) {
  AbsentRegistry& registry = absent_registry();
  const std::scoped_lock lock(registry.mutex);
  return std::ranges::none_of(registry.names, [&](const auto& absent) {
    return absent.first == backend && (absent.second == name || absent.second == kWholeBackend);
  });
}

bool in_this_build(Backend backend) { return implements(backend, kWholeBackend); }

bool has_model_kernels(Backend backend) {
  constexpr std::array<std::string_view, 7> kModelFamilies = {"embedding", "layernorm",     "attention", "gelu",
                                                               "residual",  "cross_entropy", "linear"};
  return std::ranges::all_of(kModelFamilies, [&](std::string_view family) { return implements(backend, family); });
}

namespace detail {

void absent(std::string_view kernel, Backend backend) {
  const std::string reason = unavailable_reason(backend);
  throw Error(fmt::format("kernel {} has no {} implementation{}{}", kernel, to_string(backend),
                          reason.empty() ? "" : ": ", reason));
}

bool register_absent(Backend backend, std::string_view name) {
  AbsentRegistry& registry = absent_registry();
  const std::scoped_lock lock(registry.mutex);
  registry.names.emplace_back(backend, std::string(name));
  return true;
}

void unknown_backend(Backend backend) {
  throw Error(fmt::format("unknown kernel backend {}", static_cast<int>(backend)));
}

}  // namespace detail

}  // namespace lowcomm::kernels

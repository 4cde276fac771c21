#pragma once
// Stubs for kernels a backend does not have, made from the one declaration list
// (interface/*.inc), so that adding a kernel never means writing its absence by hand. A stub throws
// lowcomm::Error naming the kernel and the backend (and, where the backend is not in this build,
// how to build it), and registers itself, so that kernels::implements() answers from the stubs
// themselves. Use inside a backend's namespace (it names kThisBackend):
//
//   #define LOWCOMM_KERNEL LOWCOMM_ABSENT_KERNEL      // every kernel of the families included
//   #define LOWCOMM_FAMILY LOWCOMM_ABSENT_FAMILY
//   #include "../interface/attention.inc"
//
// or LOWCOMM_ABSENT_KERNEL(result, name, (parameters)) alone for one kernel of a family the
// backend otherwise has.
#include <string_view>

#include "lowcomm/kernels/backend.hpp"

namespace lowcomm::kernels::detail {

// Throws: "kernel <name> has no <backend> implementation", and the reason the backend cannot
// compute here when it is not in this build.
[[noreturn]] void absent(std::string_view kernel, Backend backend);

// Records that `backend` lacks `name` (a kernel or a family); returns true.
bool register_absent(Backend backend, std::string_view name);

}  // namespace lowcomm::kernels::detail

#define LOWCOMM_ABSENT_CONCAT_(a, b) a##b
#define LOWCOMM_ABSENT_CONCAT(a, b) LOWCOMM_ABSENT_CONCAT_(a, b)

// The parameters are named in the list and unused here.
#define LOWCOMM_ABSENT_KERNEL(result, name, parameters)                                            \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")          \
  result name parameters { ::lowcomm::kernels::detail::absent(#name, kThisBackend); }              \
  _Pragma("GCC diagnostic pop")                                                                    \
  [[maybe_unused]] static const bool LOWCOMM_ABSENT_CONCAT(absent_kernel_, __COUNTER__) =          \
      ::lowcomm::kernels::detail::register_absent(kThisBackend, #name);

#define LOWCOMM_ABSENT_FAMILY(family)                                                              \
  [[maybe_unused]] static const bool absent_family_##family =                                      \
      ::lowcomm::kernels::detail::register_absent(kThisBackend, #family);

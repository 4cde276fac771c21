#pragma once
// Every backend's kernels, declared once. kernels/interface/<family>.inc lists the kernels of one
// family (the public header of the same name) as
//   LOWCOMM_KERNEL(result, name, (parameters))
// and this header declares all of them, and the backend's runtime (interface/runtime.inc), in each
// backend's namespace: reference_backend, cpu_backend, kokkos_backend, cuda_backend. Each folder
// (reference/, cpu/, kokkos/, cuda/) defines its namespace's functions in files named after the
// families; a family a backend lacks, or a backend this build lacks (not_built/), is defined by
// stubs made from the same lists (absent.hpp), so every name links in every build.
//
// The dispatch (dispatch/) checks the arguments before it calls a backend: the functions here
// assume valid sizes. What depends on the data (an index out of range, a NaN to pack) the backend
// checks itself, where the data lives, and returns the first offending position for the dispatch
// to name in the same words for every backend.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "lowcomm/core/local_rank.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels {

// What a backend's check of the data finds (interface/index_checks.inc): the first position whose
// value is outside its range, and that value; `position` is the count when every one is inside.
struct FirstOutside {
  std::size_t position = 0;
  std::int64_t value = 0;
};

}  // namespace lowcomm::kernels

#define LOWCOMM_KERNEL(result, name, parameters) result name parameters;
#define LOWCOMM_FAMILY(name)

namespace lowcomm::kernels::reference_backend {
inline constexpr Backend kThisBackend = Backend::Reference;
#include "interface/runtime.inc"
#include "interface/all.inc"
}  // namespace lowcomm::kernels::reference_backend

namespace lowcomm::kernels::cpu_backend {
inline constexpr Backend kThisBackend = Backend::Cpu;
#include "interface/runtime.inc"
#include "interface/all.inc"
}  // namespace lowcomm::kernels::cpu_backend

namespace lowcomm::kernels::kokkos_backend {
inline constexpr Backend kThisBackend = Backend::Kokkos;
#include "interface/runtime.inc"
#include "interface/all.inc"
}  // namespace lowcomm::kernels::kokkos_backend

namespace lowcomm::kernels::cuda_backend {
inline constexpr Backend kThisBackend = Backend::Cuda;
#include "interface/runtime.inc"
#include "interface/all.inc"
}  // namespace lowcomm::kernels::cuda_backend

#undef LOWCOMM_KERNEL
#undef LOWCOMM_FAMILY

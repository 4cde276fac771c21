#include "lowcomm/config/compute_config.hpp"

#include <omp.h>

#include <string>
#include <vector>

namespace lowcomm {

void add_compute_keys(ConfigSchema& schema) {
  std::vector<std::string> names;
  for (const kernels::Backend backend : available_backends()) names.emplace_back(kernels::to_string(backend));
  schema.string("compute.backend", std::string(kernels::to_string(ExecutionContext{}.backend)),
                "kernels that compute: cpu (optimised: OpenMP, BLAS), reference (the plain loops that "
                "define every result; slow, for checking), in a Kokkos build kokkos (the compressors', "
                "optimizers' and strategies' kernels in Kokkos's default execution space; the model has "
                "none), in a CUDA build cuda (every kernel, the model's, optimizers' and strategies' state "
                "on this process's GPU): docs/backends.md",
                names);
  schema.integer("compute.threads", 0,
                 "OpenMP threads per rank for the kernels (and OpenBLAS): 0 for OMP_NUM_THREADS, else the "
                 "rank's share of its node's cores (compressors give the same bits at every count; the "
                 "model's BLAS products the same bits at a given count)",
                 0, 4096);
}

int use_compute_threads(const Config& config) {
  const auto threads = static_cast<int>(config.get_int("compute.threads"));
  if (threads > 0) omp_set_num_threads(threads);
  return omp_get_max_threads();
}

ExecutionContext execution_context_from_config(const Config& config) {
  return {.backend = backend_named(config.get_string("compute.backend"))};
}

}  // namespace lowcomm

#include "lowcomm/config/compute_config.hpp"

#include <omp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lowcomm/config/options_schema.hpp"

namespace lowcomm {

namespace {

// compute.*, declared once (config/options_schema.hpp).
struct ComputeOptions {
  std::string backend = std::string(kernels::to_string(ExecutionContext{}.backend));
  std::int64_t threads = 0;
};

const OptionsSchema<ComputeOptions>& compute_schema() {
  static const auto schema = [] {
    std::vector<std::string> names;
    for (const kernels::Backend backend : available_backends()) names.emplace_back(kernels::to_string(backend));
    return OptionsSchema<ComputeOptions>()
        .field("backend", &ComputeOptions::backend,
               "kernels that compute: cpu (optimised: OpenMP, BLAS), reference (the plain loops that define every "
               "result; slow, for checking), in a Kokkos build kokkos (the compressors', optimizers' and "
               "strategies' kernels in Kokkos's default execution space; the model has none), in a CUDA build cuda "
               "(every kernel, the model's, optimizers' and strategies' state on this process's GPU): "
               "docs/backends.md",
               {.choices = names})
        .field("threads", &ComputeOptions::threads,
               "OpenMP threads per rank for the kernels (and OpenBLAS): 0 for OMP_NUM_THREADS, else the rank's share "
               "of its node's cores (compressors give the same bits at every count; the model's BLAS products the "
               "same bits at a given count)",
               {.min = 0.0, .max = 4096.0});
  }();
  return schema;
}

}  // namespace

void add_compute_keys(ConfigSchema& schema) { compute_schema().add_to(schema, "compute"); }

int use_compute_threads(const Config& config) {
  const auto threads = static_cast<int>(compute_schema().read(config, "compute").threads);
  if (threads > 0) omp_set_num_threads(threads);
  return omp_get_max_threads();
}

ExecutionContext execution_context_from_config(const Config& config) {
  return {.backend = backend_named(compute_schema().read(config, "compute").backend)};
}

}  // namespace lowcomm

#pragma once
// The compute.* section: where a run computes (kernels/execution_context.hpp).
#include "lowcomm/config/config.hpp"
#include "lowcomm/kernels/execution_context.hpp"

namespace lowcomm {

// compute.backend: one of available_backends(), default "cpu"; compute.threads: OpenMP threads of
// each rank, 0 (the default) for OMP_NUM_THREADS or else the rank's share of its node's cores.
void add_compute_keys(ConfigSchema& schema);

// Sets this process's OpenMP (and so BLAS) thread count to compute.threads when it is above 0;
// with 0 it leaves what the launch chose (MpiSession shares the node's cores among its ranks).
// Returns the count in effect.
int use_compute_threads(const Config& config);

// The execution context compute.* describes.
ExecutionContext execution_context_from_config(const Config& config);

}  // namespace lowcomm

#pragma once
// The compute.* section: where a run computes (core/execution_context.hpp).
#include "lowcomm/config/config.hpp"
#include "lowcomm/core/execution_context.hpp"

namespace lowcomm {

// compute.backend: one of available_backends(), default "cpu".
void add_compute_keys(ConfigSchema& schema);

// The execution context compute.* describes.
ExecutionContext execution_context_from_config(const Config& config);

}  // namespace lowcomm

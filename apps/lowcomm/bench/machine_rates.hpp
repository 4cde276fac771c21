#pragma once
// What this machine can do, measured in the same run as a benchmark, so that its figures read as
// a fraction of the machine's memory bandwidth or FLOP rate (not as absolute numbers that depend
// on whatever else the shared machine was doing).
#include <string_view>

#include "lowcomm/core/execution_context.hpp"

namespace lowcomm::cli {

inline constexpr std::string_view kCopyBandwidthMethod = "memcpy of 256 MiB by one core, read + write";

// GB/s, best of five (kCopyBandwidthMethod).
double measure_copy_bandwidth();

// GFLOP/s of the GEMM kernel on `execution`'s backend on 768 x 768 x 768 fp32 (the width of GPT-2
// small), best of five, with the OpenMP threads the process has.
double measure_sgemm_gflops(const ExecutionContext& execution);

}  // namespace lowcomm::cli

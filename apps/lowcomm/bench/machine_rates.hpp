#pragma once
// What this machine can do, measured in the same run as a benchmark, so that its figures read as
// a fraction of the machine's memory bandwidth or FLOP rate (not as absolute numbers that depend
// on whatever else the shared machine was doing).
#include <string>

#include "lowcomm/kernels/execution_context.hpp"

namespace lowcomm::cli {

// GB/s of a copy within the memory of `execution`'s backend (kernels/memory.hpp): 256 MiB by one
// host core, or on Cuda 1 GiB device to device; copy_bandwidth_method says which, in words.
double measure_copy_bandwidth(const ExecutionContext& execution = {});
std::string copy_bandwidth_method(const ExecutionContext& execution = {});

// GFLOP/s of the GEMM kernel on `execution`'s backend on 768 x 768 x 768 fp32 (the width of GPT-2
// small), best of five, with the OpenMP threads the process has.
double measure_sgemm_gflops(const ExecutionContext& execution);

}  // namespace lowcomm::cli

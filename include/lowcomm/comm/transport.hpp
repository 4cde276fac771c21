#pragma once
// What carries a collective's bytes between the ranks (comm.transport). The Communicator prices
// and counts every call itself (bytes, measured and modelled time, the simulated clock), then
// hands the data movement to its transport, so the counts are the same whichever moves them.
//   mpi   the MPI library: any MPI, any memory the MPI library can read (host memory; CUDA
//         managed memory, which a CUDA-aware MPI moves as GPU memory and any other MPI reads
//         through the host). The default.
//   nccl  NVIDIA's NCCL on this rank's GPU (builds with CUDA and NCCL, compute.backend = cuda).
//         Device and managed memory go to NCCL in place; host memory is staged through the GPU.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "lowcomm/comm/mpi_types.hpp"

namespace lowcomm {

enum class Transport : std::uint8_t { Mpi, Nccl };

// The element types a transport sums: the Reducible ones, and fp16 and bf16 stored as their 16
// bits (kernels/float16.hpp), summed in their own precision.
enum class SumType : std::uint8_t { F32, F64, I32, I64, U32, U64, F16, BF16 };

template <Reducible T>
constexpr SumType sum_type() {
  if constexpr (std::is_same_v<T, float>) return SumType::F32;
  if constexpr (std::is_same_v<T, double>) return SumType::F64;
  if constexpr (std::is_same_v<T, std::int32_t>) return SumType::I32;
  if constexpr (std::is_same_v<T, std::int64_t>) return SumType::I64;
  if constexpr (std::is_same_v<T, std::uint32_t>) return SumType::U32;
  if constexpr (std::is_same_v<T, std::uint64_t>) return SumType::U64;
}

constexpr std::size_t element_bytes(SumType type) {
  switch (type) {
    case SumType::F64:
    case SumType::I64:
    case SumType::U64: return 8;
    case SumType::F16:
    case SumType::BF16: return 2;
    case SumType::F32:
    case SumType::I32:
    case SumType::U32: break;
  }
  return 4;
}

std::string_view to_string(Transport transport);
// "mpi" or "nccl"; throws ConfigError listing both otherwise.
Transport parse_transport(std::string_view name);

// "" when `transport` can be used in this build; otherwise why not, saying what to change (NCCL
// in a build without it). Whether a GPU is there is checked when a Communicator starts NCCL.
std::string unavailable_reason(Transport transport);

// "NCCL 2.27.7" in a build with NCCL, "" otherwise (for `lowcomm info`).
std::string nccl_version();

}  // namespace lowcomm

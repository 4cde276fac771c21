#pragma once
// What lowcomm's two ways of talking to other ranks (the counted Communicator and the uncounted
// ControlChannel) share: which element types they move and how MPI names them, and how an MPI
// error becomes an exception.
#include <mpi.h>

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace lowcomm {

// The element types a reduction accepts (they map to MPI's predefined datatypes).
template <class T>
concept Reducible = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
                    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>;

// Gathers and broadcasts move any plain bytes (compressed payloads, index/value structs...).
template <class T>
concept Transferable = std::is_trivially_copyable_v<T>;

template <Reducible T>
MPI_Datatype mpi_datatype() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  if constexpr (std::is_same_v<T, std::uint32_t>) return MPI_UINT32_T;
  if constexpr (std::is_same_v<T, std::uint64_t>) return MPI_UINT64_T;
}

// Throws CommError "<what> failed: <MPI's message>" unless status is MPI_SUCCESS.
void check_mpi(int status, std::string_view what);

}  // namespace lowcomm

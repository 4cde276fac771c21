#pragma once
// The ranks' control traffic: agreeing on failures, signals and configuration, gathering each
// rank's metrics to rank 0 for the log, broadcasting small values. It is bookkeeping, not
// training traffic, so it is never counted nor charged modelled time (the Communicator's
// collectives are, communicator.hpp). It runs on its own duplicate of the MPI communicator, so
// its messages can never match a counted collective's. Every member is collective over the
// channel's ranks; an MPI error throws CommError.
#include <mpi.h>

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/comm/mpi_types.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

class ControlChannel {
 public:
  explicit ControlChannel(MPI_Comm comm);  // collective: duplicates comm
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  // The largest, smallest or summed value over all ranks, on every rank.
  template <Reducible T>
  T max(T value) const { return reduce(value, MPI_MAX); }
  template <Reducible T>
  T min(T value) const { return reduce(value, MPI_MIN); }
  template <Reducible T>
  T sum(T value) const { return reduce(value, MPI_SUM); }
  // Element-wise maximum, minimum or sum over all ranks, in place (several flags agreed in one
  // call; a reference mean computed beside the counted exchange).
  template <Reducible T>
  void max_each(std::span<T> values) const { reduce_each(values, MPI_MAX); }
  template <Reducible T>
  void min_each(std::span<T> values) const { reduce_each(values, MPI_MIN); }
  template <Reducible T>
  void sum_each(std::span<T> values) const { reduce_each(values, MPI_SUM); }

  // Every rank's value, in rank order, on every rank.
  template <Transferable T>
  std::vector<T> all_gather(const T& value) const {
    std::vector<T> all(static_cast<std::size_t>(size_));
    all_gather_bytes(&value, all.data(), sizeof(T));
    return all;
  }

  // Every rank's `mine` (the same count on every rank), in rank order, on every rank: `all` holds
  // size() * mine.size() elements.
  template <Transferable T>
  void all_gather_each(std::span<const T> mine, std::span<T> all) const {
    if (all.size() != mine.size() * static_cast<std::size_t>(size_)) {
      throw CommError("control all_gather_each: the output must hold size() * input elements");
    }
    all_gather_bytes(mine.data(), all.data(), mine.size_bytes());
  }

  // Every rank's value, in rank order, on rank 0; empty on the other ranks.
  template <Transferable T>
  std::vector<T> gather_to_root(const T& value) const {
    std::vector<T> all(is_root() ? static_cast<std::size_t>(size_) : 0);
    gather_bytes(&value, all.data(), sizeof(T));
    return all;
  }

  // Rank 0's value, on every rank.
  template <Transferable T>
  T broadcast(T value) const {
    broadcast_bytes(&value, sizeof(T));
    return value;
  }

  // Every rank's `values` (the same count on every rank) reach rank 0, which calls use(r, values_r)
  // for r = 0, 1, ... in order, receiving one rank's values at a time: rank 0 never holds more
  // than one other rank's buffer (model-sized gradients for a trace, parameters for a replay).
  void stream_to_root(std::span<const float> values,
                      const std::function<void(int rank, std::span<const float> values)>& use) const;

  // Every rank's text, of any length, on rank 0 in rank order (empty on the other ranks).
  std::vector<std::string> gather_text_to_root(std::string_view mine) const;

  void barrier() const;

  // The channel's MPI communicator, for the few MPI calls outside comm/ that take one.
  MPI_Comm mpi() const { return comm_; }

 private:
  template <Reducible T>
  T reduce(T value, MPI_Op op) const {
    T result{};
    check_mpi(MPI_Allreduce(&value, &result, 1, mpi_datatype<T>(), op, comm_), "MPI_Allreduce (control)");
    return result;
  }
  template <Reducible T>
  void reduce_each(std::span<T> values, MPI_Op op) const {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), mpi_datatype<T>(), op,
                            comm_),
              "MPI_Allreduce (control)");
  }
  void all_gather_bytes(const void* mine, void* all, std::size_t bytes) const;
  void gather_bytes(const void* mine, void* all, std::size_t bytes) const;
  void broadcast_bytes(void* data, std::size_t bytes) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace lowcomm

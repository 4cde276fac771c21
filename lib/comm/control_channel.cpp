#include "lowcomm/comm/control_channel.hpp"

#include <climits>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

int checked_count(std::size_t count, const char* what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw CommError(std::string(what) + ": more than INT_MAX elements in one control message");
  }
  return static_cast<int>(count);
}

}  // namespace

ControlChannel::ControlChannel(MPI_Comm comm) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup (control)");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler (control)");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank (control)");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size (control)");
}

ControlChannel::~ControlChannel() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void ControlChannel::all_gather_bytes(const void* mine, void* all, std::size_t bytes) const {
  const int n = checked_count(bytes, "all_gather");
  check_mpi(MPI_Allgather(mine, n, MPI_BYTE, all, n, MPI_BYTE, comm_), "MPI_Allgather (control)");
}

void ControlChannel::gather_bytes(const void* mine, void* all, std::size_t bytes) const {
  const int n = checked_count(bytes, "gather_to_root");
  check_mpi(MPI_Gather(mine, n, MPI_BYTE, all, n, MPI_BYTE, 0, comm_), "MPI_Gather (control)");
}

void ControlChannel::broadcast_bytes(void* data, std::size_t bytes) const {
  check_mpi(MPI_Bcast(data, checked_count(bytes, "broadcast"), MPI_BYTE, 0, comm_), "MPI_Bcast (control)");
}

void ControlChannel::stream_to_root(std::span<const float> values,
                                    const std::function<void(int, std::span<const float>)>& use) const {
  const int n = checked_count(values.size(), "stream_to_root");
  constexpr int kTag = 1;
  if (!is_root()) {
    check_mpi(MPI_Send(values.data(), n, MPI_FLOAT, 0, kTag, comm_), "MPI_Send (control)");
    return;
  }
  use(0, values);
  std::vector<float> other(values.size());
  for (int r = 1; r < size_; ++r) {
    check_mpi(MPI_Recv(other.data(), n, MPI_FLOAT, r, kTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv (control)");
    use(r, other);
  }
}

std::vector<std::string> ControlChannel::gather_text_to_root(std::string_view mine) const {
  const int length = checked_count(mine.size(), "gather_text_to_root");
  std::vector<int> lengths(is_root() ? static_cast<std::size_t>(size_) : 0);
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_), "MPI_Gather (control)");
  std::vector<int> offsets(lengths.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = checked_count(total, "gather_text_to_root (total)");
    total += static_cast<std::size_t>(lengths[r]);
  }
  std::string all(total, '\0');
  check_mpi(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm_),
            "MPI_Gatherv (control)");
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    texts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return texts;
}

void ControlChannel::barrier() const { check_mpi(MPI_Barrier(comm_), "MPI_Barrier (control)"); }

}  // namespace lowcomm

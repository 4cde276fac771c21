// comm.transport = mpi: the collectives as the MPI library runs them, on whatever memory it is
// given (collective_transport.hpp).
#include <fmt/format.h>

#include <climits>
#include <optional>
#include <utility>
#include <vector>

#include "collective_transport.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm {

namespace {

// MPI counts and displacements are ints; larger buffers must be split by the caller.
int mpi_count(std::size_t count, std::string_view what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw CommError(fmt::format("{}: {} elements exceed MPI's limit of {} per call; split the buffer",
                                what, count, INT_MAX));
  }
  return static_cast<int>(count);
}

// MPI user reductions over 16-bit floats: each element is widened to float, added, and rounded
// back, so every partial sum is rounded to the wire type (commutative; the order is MPI's).
// (Two functions rather than a template, so that each gets SIMD clones.)
LOWCOMM_SIMD_CLONES
void sum_f16(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = kernels::float_to_f16(kernels::f16_to_float(a[i]) + kernels::f16_to_float(b[i]));
}

LOWCOMM_SIMD_CLONES
void sum_bf16(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) {
    b[i] = kernels::float_to_bf16(kernels::bf16_to_float(a[i]) + kernels::bf16_to_float(b[i]));
  }
}

// MPI's counts and displacements of an all-gather of counts[w] elements from rank w.
struct GatherLayout {
  std::vector<int> counts, displacements;

  explicit GatherLayout(std::span<const std::size_t> elements)
      : counts(elements.size()), displacements(elements.size()) {
    std::size_t offset = 0;
    for (std::size_t w = 0; w < elements.size(); ++w) {
      counts[w] = mpi_count(elements[w], "all_gather_v");
      displacements[w] = mpi_count(offset, "all_gather_v (total)");
      offset += elements[w];
    }
  }
};

// An MPI request, and what MPI reads until it completes (an all-gather's layout).
class MpiTransfer final : public TransferInFlight {
 public:
  MpiTransfer() = default;
  MpiTransfer(const MpiTransfer&) = delete;
  MpiTransfer& operator=(const MpiTransfer&) = delete;
  ~MpiTransfer() override {
    if (!complete_) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  bool test() override {
    if (!complete_) {
      int flag = 0;
      const int status = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
      complete_ = flag != 0 || status != MPI_SUCCESS;
      check_mpi(status, "MPI_Test");
    }
    return complete_;
  }
  void wait() override {
    if (complete_) return;
    complete_ = true;  // a failed wait is not waited for again, by the destructor
    check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  MPI_Request* request() { return &request_; }
  std::optional<GatherLayout> layout;

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool complete_ = false;
};

class MpiTransport final : public CollectiveTransport {
 public:
  explicit MpiTransport(MPI_Comm comm) : comm_(comm) { check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank"); }
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;
  ~MpiTransport() override {
    for (MPI_Op* op : {&sum_f16_, &sum_bf16_}) {
      if (*op != MPI_OP_NULL) MPI_Op_free(op);
    }
    for (auto& [bytes, type] : element_types_) MPI_Type_free(&type);
  }

  void all_reduce_sum(void* data, std::size_t count, SumType type) override {
    const int n = mpi_count(count, "all_reduce");
    const auto [datatype, op] = sum_of(type);
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, data, n, datatype, op, comm_), "MPI_Allreduce");
  }

  void all_gather(const void* mine, std::size_t count, std::size_t element_bytes, void* all) override {
    const int n = mpi_count(count, "all_gather");
    const MPI_Datatype type = element_type(element_bytes);
    check_mpi(MPI_Allgather(mine, n, type, all, n, type, comm_), "MPI_Allgather");
  }

  void all_gather_v(const void* mine, std::span<const std::size_t> counts, std::size_t element_bytes,
                    void* all) override {
    const GatherLayout layout(counts);
    const MPI_Datatype type = element_type(element_bytes);
    check_mpi(MPI_Allgatherv(mine, layout.counts[static_cast<std::size_t>(rank_)], type, all, layout.counts.data(),
                             layout.displacements.data(), type, comm_),
              "MPI_Allgatherv");
  }

  void broadcast(void* data, std::size_t count, std::size_t element_bytes, int root) override {
    const int n = mpi_count(count, "broadcast");
    check_mpi(MPI_Bcast(data, n, element_type(element_bytes), root, comm_), "MPI_Bcast");
  }

  void send_receive(int to, const void* send, int from, void* receive, std::size_t count,
                    std::size_t element_bytes) override {
    if (to < 0 && from < 0) return;
    const int n = mpi_count(count, "send_pairs");
    const MPI_Datatype type = element_type(element_bytes);
    constexpr int kTag = 7;  // this communicator's only point-to-point messages
    check_mpi(MPI_Sendrecv(send, to < 0 ? 0 : n, type, to < 0 ? MPI_PROC_NULL : to, kTag, receive, from < 0 ? 0 : n,
                           type, from < 0 ? MPI_PROC_NULL : from, kTag, comm_, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
  }

  void all_to_all(const void* send, std::size_t block_count, std::size_t element_bytes, void* receive) override {
    const int n = mpi_count(block_count, "all_to_all");
    const MPI_Datatype type = element_type(element_bytes);
    check_mpi(MPI_Alltoall(send, n, type, receive, n, type, comm_), "MPI_Alltoall");
  }

  std::unique_ptr<TransferInFlight> start_all_reduce_sum(void* data, std::size_t count, SumType type) override {
    const int n = mpi_count(count, "start_all_reduce");
    const auto [datatype, op] = sum_of(type);
    auto transfer = std::make_unique<MpiTransfer>();
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, n, datatype, op, comm_, transfer->request()), "MPI_Iallreduce");
    return transfer;
  }

  std::unique_ptr<TransferInFlight> start_all_gather_v(const void* mine, std::span<const std::size_t> counts,
                                                       std::size_t element_bytes, void* all) override {
    auto transfer = std::make_unique<MpiTransfer>();
    const GatherLayout& layout = transfer->layout.emplace(counts);
    const MPI_Datatype type = element_type(element_bytes);
    check_mpi(MPI_Iallgatherv(mine, layout.counts[static_cast<std::size_t>(rank_)], type, all, layout.counts.data(),
                              layout.displacements.data(), type, comm_, transfer->request()),
              "MPI_Iallgatherv");
    return transfer;
  }

  std::unique_ptr<TransferInFlight> start_broadcast(void* data, std::size_t count, std::size_t element_bytes,
                                                    int root) override {
    const int n = mpi_count(count, "start_broadcast");
    auto transfer = std::make_unique<MpiTransfer>();
    check_mpi(MPI_Ibcast(data, n, element_type(element_bytes), root, comm_, transfer->request()), "MPI_Ibcast");
    return transfer;
  }

 private:
  // The datatype and operation that sum `type`: MPI's own, or a user operation on 16-bit words.
  std::pair<MPI_Datatype, MPI_Op> sum_of(SumType type) {
    switch (type) {
      case SumType::F32: return {MPI_FLOAT, MPI_SUM};
      case SumType::F64: return {MPI_DOUBLE, MPI_SUM};
      case SumType::I32: return {MPI_INT32_T, MPI_SUM};
      case SumType::I64: return {MPI_INT64_T, MPI_SUM};
      case SumType::U32: return {MPI_UINT32_T, MPI_SUM};
      case SumType::U64: return {MPI_UINT64_T, MPI_SUM};
      case SumType::F16:
      case SumType::BF16: break;
    }
    const bool f16 = type == SumType::F16;
    MPI_Op& op = f16 ? sum_f16_ : sum_bf16_;
    if (op == MPI_OP_NULL) check_mpi(MPI_Op_create(f16 ? &sum_f16 : &sum_bf16, 1, &op), "MPI_Op_create");
    return {MPI_UINT16_T, op};
  }

  // Contiguous bytes, cached per size: counts stay in elements, so MPI's int limit applies to
  // elements rather than bytes.
  MPI_Datatype element_type(std::size_t element_bytes) {
    for (const auto& [bytes, type] : element_types_) {
      if (bytes == element_bytes) return type;
    }
    MPI_Datatype type = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_contiguous(mpi_count(element_bytes, "element size"), MPI_BYTE, &type),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
    element_types_.emplace_back(element_bytes, type);
    return type;
  }

  MPI_Comm comm_;
  int rank_ = 0;
  std::vector<std::pair<std::size_t, MPI_Datatype>> element_types_;
  MPI_Op sum_f16_ = MPI_OP_NULL;  // made on first use
  MPI_Op sum_bf16_ = MPI_OP_NULL;
};

}  // namespace

std::unique_ptr<CollectiveTransport> make_mpi_transport(MPI_Comm comm) { return std::make_unique<MpiTransport>(comm); }

}  // namespace lowcomm

// comm.transport = nccl: the collectives as NCCL runs them on this rank's GPU (the CUDA backend's
// device), on a stream of their own, so that a collective started without blocking runs while
// the backend's kernels compute. Device and managed memory go to NCCL in place; host memory is
// staged through device buffers (copied in when the collective starts, out when it completes).
// NCCL has no all-gather of varying sizes: that is one broadcast per rank, grouped into a single
// launch. NCCL sums fp16 and bf16 in their own type, as MPI's 16-bit sums here do (in NCCL's
// order, not MPI's: the bits of a sum over three or more ranks may differ between transports).
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "collective_transport.hpp"
#include "cuda_runtime.hpp"  // kernels/cuda: this process's device and the backend's stream
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace cuda = kernels::cuda_backend;

namespace {

void check_nccl(ncclResult_t result, std::string_view what, ncclComm_t comm = nullptr) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  const char* detail = ncclGetLastError(comm);
  throw CommError(fmt::format("NCCL: {} failed: {}{}{}", what, ncclGetErrorString(result),
                              detail != nullptr && *detail != '\0' ? ": " : "", detail != nullptr ? detail : ""));
}

ncclDataType_t nccl_type(SumType type) {
  switch (type) {
    case SumType::F32: return ncclFloat32;
    case SumType::F64: return ncclFloat64;
    case SumType::I32: return ncclInt32;
    case SumType::I64: return ncclInt64;
    case SumType::U32: return ncclUint32;
    case SumType::U64: return ncclUint64;
    case SumType::F16: return ncclFloat16;
    case SumType::BF16: return ncclBfloat16;
  }
  return ncclFloat32;
}

// One collective on the transport's stream: the device memory it reads and writes, where that
// had to be staged, and the event that marks its end.
class NcclTransfer final : public TransferInFlight {
 public:
  explicit NcclTransfer(cudaStream_t stream) : stream_(stream) {
    cuda::check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  NcclTransfer(const NcclTransfer&) = delete;
  NcclTransfer& operator=(const NcclTransfer&) = delete;
  ~NcclTransfer() override {
    if (done_ != nullptr) cudaEventSynchronize(done_);  // the buffers must outlive the collective
    for (void* buffer : staging_) cudaFreeAsync(buffer, stream_);
    if (done_ != nullptr) cudaEventDestroy(done_);
  }

  // Where NCCL may read `bytes` at `host_or_device`: the memory itself, or a device copy made on
  // the stream now (`copy_in`) and copied back when the collective completes (`copy_out`).
  void* device_view(void* host_or_device, std::size_t bytes, bool copy_in, bool copy_out) {
    if (bytes == 0 || cuda::device_accessible(host_or_device)) return host_or_device;
    void* staged = nullptr;
    cuda::check(cudaMallocAsync(&staged, bytes, stream_), "cudaMallocAsync (NCCL staging)");
    staging_.push_back(staged);
    if (copy_in) {
      // From pageable host memory this returns once the source has been read.
      cuda::check(cudaMemcpyAsync(staged, host_or_device, bytes, cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpyAsync (NCCL staging in)");
    }
    if (copy_out) copy_back_.push_back({host_or_device, staged, bytes});
    return staged;
  }
  const void* device_view(const void* host_or_device, std::size_t bytes) {
    return device_view(const_cast<void*>(host_or_device), bytes, /*copy_in=*/true, /*copy_out=*/false);
  }

  void issued() { cuda::check(cudaEventRecord(done_, stream_), "cudaEventRecord (NCCL)"); }

  bool test() override {
    if (complete_) return true;
    const cudaError_t status = cudaEventQuery(done_);
    if (status == cudaErrorNotReady) return false;
    cuda::check(status, "a NCCL collective");
    finish();
    return true;
  }

  void wait() override {
    if (complete_) return;
    cuda::check(cudaEventSynchronize(done_), "waiting for a NCCL collective");
    finish();
  }

 private:
  void finish() {
    for (const CopyBack& c : copy_back_) {
      cuda::check(cudaMemcpyAsync(c.host, c.device, c.bytes, cudaMemcpyDeviceToHost, stream_),
                  "cudaMemcpyAsync (NCCL staging out)");
    }
    if (!copy_back_.empty()) cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (NCCL staging out)");
    complete_ = true;
  }

  struct CopyBack {
    void* host;
    const void* device;
    std::size_t bytes;
  };
  cudaStream_t stream_;
  cudaEvent_t done_ = nullptr;
  std::vector<void*> staging_;
  std::vector<CopyBack> copy_back_;
  bool complete_ = false;
};

class NcclTransport final : public CollectiveTransport {
 public:
  explicit NcclTransport(MPI_Comm comm) {
    check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
    // Every rank's GPU first, agreed over MPI: a rank without one must not leave the others
    // waiting in ncclCommInitRank.
    const std::string reason = cuda::unavailable_reason();
    int usable = reason.empty() ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (NCCL start)");
    if (!reason.empty()) throw Error(fmt::format("comm.transport = \"nccl\" needs a GPU on every rank: {}", reason));
    if (usable == 0) {
      throw Error("comm.transport = \"nccl\" needs a GPU on every rank: another rank has none (its own error says "
                  "why)");
    }
    (void)cuda::stream();  // this process's device, current on this thread
    struct {
      ncclResult_t result;
      ncclUniqueId id;
    } start{};
    if (rank_ == 0) start.result = ncclGetUniqueId(&start.id);
    check_mpi(MPI_Bcast(&start, sizeof start, MPI_BYTE, 0, comm), "MPI_Bcast (NCCL unique id)");
    check_nccl(start.result, "ncclGetUniqueId (on rank 0)");
    const ncclResult_t made = ncclCommInitRank(&comm_, size_, start.id, rank_);
    if (made != ncclSuccess) {
      const std::string what = fmt::format("ncclCommInitRank (rank {} of {}; NCCL needs a GPU of its own for every "
                                           "rank: run as many ranks per node as GPUs, e.g. Slurm --gpus-per-task=1)",
                                           rank_, size_);
      check_nccl(made, what);
    }
    cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (NCCL)");
    cuda::check(cudaEventCreateWithFlags(&computed_, cudaEventDisableTiming), "cudaEventCreateWithFlags (NCCL)");
  }
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;
  ~NcclTransport() override {
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    if (computed_ != nullptr) cudaEventDestroy(computed_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  Transport kind() const override { return Transport::Nccl; }

  void all_gather(const void* mine, std::size_t count, std::size_t element_bytes, void* all) override {
    auto transfer = begin();
    const std::size_t block = count * element_bytes;
    const void* send = transfer->device_view(mine, block);
    void* receive = transfer->device_view(all, block * static_cast<std::size_t>(size_), false, true);
    check_nccl(ncclAllGather(send, receive, block, ncclUint8, comm_, stream_), "ncclAllGather", comm_);
    transfer->issued();
    transfer->wait();
  }

  std::unique_ptr<TransferInFlight> start_all_reduce_sum(void* data, std::size_t count, SumType type) override {
    auto transfer = begin();
    void* buffer = transfer->device_view(data, count * element_bytes(type), true, true);
    check_nccl(ncclAllReduce(buffer, buffer, count, nccl_type(type), ncclSum, comm_, stream_), "ncclAllReduce", comm_);
    transfer->issued();
    return transfer;
  }

  std::unique_ptr<TransferInFlight> start_all_gather_v(const void* mine, std::span<const std::size_t> counts,
                                                       std::size_t element_bytes, void* all) override {
    auto transfer = begin();
    std::size_t total = 0;
    for (const std::size_t c : counts) total += c;
    const auto me = static_cast<std::size_t>(rank_);
    const void* send = transfer->device_view(mine, counts[me] * element_bytes);
    auto* receive = static_cast<unsigned char*>(transfer->device_view(all, total * element_bytes, false, true));
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    std::size_t offset = 0;
    for (std::size_t w = 0; w < counts.size(); ++w) {
      const std::size_t bytes = counts[w] * element_bytes;
      // Every rank knows every count, so all skip the same empty blocks.
      if (bytes > 0) {
        // (A non-root's send buffer is not read; it is given one NCCL can check.)
        check_nccl(ncclBroadcast(w == me ? send : receive + offset, receive + offset, bytes, ncclUint8,
                                 static_cast<int>(w), comm_, stream_),
                   "ncclBroadcast (all-gather of varying sizes)", comm_);
      }
      offset += bytes;
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd", comm_);
    transfer->issued();
    return transfer;
  }

  std::unique_ptr<TransferInFlight> start_broadcast(void* data, std::size_t count, std::size_t element_bytes,
                                                    int root) override {
    auto transfer = begin();
    const std::size_t bytes = count * element_bytes;
    void* buffer = transfer->device_view(data, bytes, rank_ == root, true);
    check_nccl(ncclBroadcast(buffer, buffer, bytes, ncclUint8, root, comm_, stream_), "ncclBroadcast", comm_);
    transfer->issued();
    return transfer;
  }

 private:
  // A transfer whose collective starts after the work queued so far on the backend's stream
  // (whatever wrote the data). The backend's kernels wait for themselves before returning today,
  // so this costs nothing; it keeps the order right should they stop doing so.
  std::unique_ptr<NcclTransfer> begin() {
    cuda::check(cudaEventRecord(computed_, cuda::stream()), "cudaEventRecord (NCCL)");
    cuda::check(cudaStreamWaitEvent(stream_, computed_, 0), "cudaStreamWaitEvent (NCCL)");
    return std::make_unique<NcclTransfer>(stream_);
  }

  int rank_ = 0;
  int size_ = 1;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t computed_ = nullptr;
};

}  // namespace

std::unique_ptr<CollectiveTransport> make_nccl_transport(MPI_Comm comm) { return std::make_unique<NcclTransport>(comm); }

std::string nccl_library_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "NCCL (its version unknown)";
  // Since NCCL 2.9: major * 10000 + minor * 100 + patch.
  return fmt::format("NCCL {}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

}  // namespace lowcomm

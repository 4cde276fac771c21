// comm.transport = nccl: the collectives as NCCL runs them on this rank's GPU (the CUDA backend's
// device), on a stream of their own, so that a collective started without blocking runs while
// the backend's kernels compute. Device and managed memory go to NCCL in place; host memory is
// staged through device buffers (copied in when the collective starts, out on a second stream
// when it completes, so that waiting for one collective never waits for those started after it).
// NCCL has no all-gather of varying sizes: that is one broadcast per rank, grouped into a single
// launch. NCCL sums fp16 and bf16 in their own type, as MPI's 16-bit sums here do (in NCCL's
// order, not MPI's: the bits of a sum over three or more ranks may differ between transports).
//
// Failures: NCCL's start is collective, and a rank that cannot take part would leave the others
// waiting in it, so every rank first agrees over MPI that each has a GPU of its own. A collective
// that NCCL reports failed (a peer gone, a network error) is raised as CommError while waiting,
// instead of waiting forever. A transport destroyed while an exception unwinds aborts its NCCL
// communicator (ncclCommAbort, local) rather than destroying it (ncclCommDestroy, which every
// rank on the node must call, and would hang the ranks that are still well).
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "nccl_transport.hpp"
#include "../../kernels/cuda_device.hpp"  // this process's device and the CUDA backend's stream
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace cuda = kernels::cuda_device;

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

// The NCCL calls between its construction and end() go to NCCL as one group. A group left open
// would defer every later NCCL call of the thread, so one that a thrown error leaves is closed too.
class NcclGroup {
 public:
  explicit NcclGroup(ncclComm_t comm) : comm_(comm) { check_nccl(ncclGroupStart(), "ncclGroupStart", comm); }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  ~NcclGroup() {
    if (open_) ncclGroupEnd();
  }
  void end() {
    open_ = false;
    check_nccl(ncclGroupEnd(), "ncclGroupEnd", comm_);
  }

 private:
  ncclComm_t comm_;
  bool open_ = true;
};

// The streams and communicator a transfer runs on.
struct NcclStreams {
  ncclComm_t comm = nullptr;
  cudaStream_t collectives = nullptr;  // the collectives and the staging copies in
  cudaStream_t copies_out = nullptr;   // the staging copies out, after a collective has completed
};

// One collective on the transport's stream: the device memory it reads and writes, where that
// had to be staged, and the event that marks its end.
class NcclTransfer final : public TransferInFlight {
 public:
  explicit NcclTransfer(const NcclStreams& streams) : streams_(streams) {
    cuda::check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  NcclTransfer(const NcclTransfer&) = delete;
  NcclTransfer& operator=(const NcclTransfer&) = delete;
  ~NcclTransfer() override {
    // The buffers must outlive the collective. While an exception unwinds, the collective may
    // never end (its transport is about to abort NCCL): its staging is left, not waited for.
    const bool ended = complete_ || (std::uncaught_exceptions() == 0 && cudaEventSynchronize(done_) == cudaSuccess);
    if (ended) {
      for (void* buffer : staging_) cudaFreeAsync(buffer, streams_.collectives);
    }
    cudaEventDestroy(done_);
  }

  // Where NCCL may read `bytes` at `host_or_device`: the memory itself, or a device copy made on
  // the stream now (`copy_in`) and copied back when the collective completes (`copy_out`).
  void* device_view(void* host_or_device, std::size_t bytes, bool copy_in, bool copy_out) {
    if (bytes == 0 || cuda::device_accessible(host_or_device)) return host_or_device;
    void* staged = nullptr;
    cuda::check(cudaMallocAsync(&staged, bytes, streams_.collectives), "cudaMallocAsync (NCCL staging)");
    staging_.push_back(staged);
    if (copy_in) {
      // From pageable host memory this returns once the source has been read into the driver's
      // own staging, without waiting for the stream.
      cuda::check(cudaMemcpyAsync(staged, host_or_device, bytes, cudaMemcpyHostToDevice, streams_.collectives),
                  "cudaMemcpyAsync (NCCL staging in)");
    }
    if (copy_out) copy_back_.push_back({host_or_device, staged, bytes});
    return staged;
  }
  const void* device_view(const void* host_or_device, std::size_t bytes) {
    return device_view(const_cast<void*>(host_or_device), bytes, /*copy_in=*/true, /*copy_out=*/false);
  }

  void issued() { cuda::check(cudaEventRecord(done_, streams_.collectives), "cudaEventRecord (NCCL)"); }

  bool test() override {
    if (complete_) return true;
    const cudaError_t status = cudaEventQuery(done_);
    if (status == cudaErrorNotReady) {
      check_peers();
      return false;
    }
    ended(status);
    return true;
  }

  // Polls rather than blocking in cudaEventSynchronize, which would never return if a peer died.
  void wait() override {
    while (!test()) std::this_thread::yield();
  }

 private:
  void check_peers() {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(streams_.comm, &state);
    if (asked != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
      complete_ = true;  // never to be waited for again: the transport aborts NCCL as the error unwinds
      check_nccl(asked != ncclSuccess ? asked : state, "a collective in flight", streams_.comm);
    }
  }

  void ended(cudaError_t status) {
    complete_ = true;
    cuda::check(status, "a NCCL collective");
    for (const CopyBack& c : copy_back_) {
      cuda::check(cudaMemcpyAsync(c.host, c.device, c.bytes, cudaMemcpyDeviceToHost, streams_.copies_out),
                  "cudaMemcpyAsync (NCCL staging out)");
    }
    if (!copy_back_.empty()) {
      cuda::check(cudaStreamSynchronize(streams_.copies_out), "cudaStreamSynchronize (NCCL staging out)");
    }
  }

  struct CopyBack {
    void* host;
    const void* device;
    std::size_t bytes;
  };
  NcclStreams streams_;
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
    // Everything that can fail on one rank alone happens before NCCL starts, and the ranks agree
    // on it over MPI: a rank that cannot take part must not leave the others waiting in NCCL.
    std::string failure = cuda::unavailable_reason();
    char gpu[MPI_MAX_PROCESSOR_NAME + 64] = {};  // "<host> <PCI bus id>", the same on two ranks that share a GPU
    if (failure.empty()) {
      try {
        (void)cuda::stream();  // this process's device, current on this thread
        int device = 0;
        cuda::check(cudaGetDevice(&device), "cudaGetDevice");
        char host[MPI_MAX_PROCESSOR_NAME] = {};
        int host_length = 0;
        check_mpi(MPI_Get_processor_name(host, &host_length), "MPI_Get_processor_name");
        char bus[64] = {};
        cuda::check(cudaDeviceGetPCIBusId(bus, sizeof bus, device), "cudaDeviceGetPCIBusId");
        std::snprintf(gpu, sizeof gpu, "%s %s", host, bus);
        cuda::check(cudaStreamCreateWithFlags(&streams_.collectives, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags (NCCL)");
        cuda::check(cudaStreamCreateWithFlags(&streams_.copies_out, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags (NCCL)");
        cuda::check(cudaEventCreateWithFlags(&computed_, cudaEventDisableTiming), "cudaEventCreateWithFlags (NCCL)");
      } catch (const Error& e) {
        failure = e.what();
      }
    }
    std::vector<char> gpus(sizeof gpu * static_cast<std::size_t>(size_));
    constexpr int kGpuName = static_cast<int>(sizeof gpu);
    check_mpi(MPI_Allgather(gpu, kGpuName, MPI_CHAR, gpus.data(), kGpuName, MPI_CHAR, comm),
              "MPI_Allgather (NCCL start)");
    if (failure.empty()) failure = shared_gpu(gpus, sizeof gpu);
    agree(comm, failure, "needs a GPU of its own on every rank");

    struct {
      ncclResult_t result;
      ncclUniqueId id;
    } start{};
    if (rank_ == 0) start.result = ncclGetUniqueId(&start.id);
    check_mpi(MPI_Bcast(&start, sizeof start, MPI_BYTE, 0, comm), "MPI_Bcast (NCCL unique id)");
    if (start.result != ncclSuccess) {
      release();
      check_nccl(start.result, "ncclGetUniqueId (on rank 0)");
    }
    const ncclResult_t made = ncclCommInitRank(&streams_.comm, size_, start.id, rank_);
    failure.clear();
    if (made != ncclSuccess) {
      const char* detail = ncclGetLastError(nullptr);
      failure = fmt::format("ncclCommInitRank failed on rank {} of {}: {}{}{}", rank_, size_, ncclGetErrorString(made),
                            detail != nullptr && *detail != '\0' ? ": " : "", detail != nullptr ? detail : "");
    }
    agree(comm, failure, "could not start");
  }
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;
  ~NcclTransport() override { release(); }

  void all_gather(const void* mine, std::size_t count, std::size_t element_bytes, void* all) override {
    start_all_gather_v(mine, std::vector<std::size_t>(static_cast<std::size_t>(size_), count), element_bytes, all)
        ->wait();
  }

  // NCCL's point-to-point messages, grouped so that neither the send nor the receive waits for
  // the other.
  void send_receive(int to, const void* send, int from, void* receive, std::size_t count,
                    std::size_t element_bytes) override {
    if (to < 0 && from < 0) return;
    auto transfer = begin();
    const std::size_t bytes = count * element_bytes;
    const void* sent = to < 0 ? nullptr : transfer->device_view(send, bytes);
    void* received = from < 0 ? nullptr : transfer->device_view(receive, bytes, false, true);
    {
      NcclGroup group(streams_.comm);
      if (to >= 0) {
        check_nccl(ncclSend(sent, bytes, ncclUint8, to, streams_.comm, streams_.collectives), "ncclSend",
                   streams_.comm);
      }
      if (from >= 0) {
        check_nccl(ncclRecv(received, bytes, ncclUint8, from, streams_.comm, streams_.collectives), "ncclRecv",
                   streams_.comm);
      }
      group.end();
    }
    transfer->issued();
    transfer->wait();
  }

  // NCCL has no all-to-all: a send and a receive per peer, grouped (the pattern NCCL documents).
  void all_to_all(const void* send, std::size_t block_count, std::size_t element_bytes, void* receive) override {
    auto transfer = begin();
    const std::size_t block = block_count * element_bytes, bytes = block * static_cast<std::size_t>(size_);
    const auto* sent = static_cast<const std::byte*>(transfer->device_view(send, bytes));
    auto* received = static_cast<std::byte*>(transfer->device_view(receive, bytes, false, true));
    {
      NcclGroup group(streams_.comm);
      for (int peer = 0; peer < size_; ++peer) {
        const std::size_t at = static_cast<std::size_t>(peer) * block;
        check_nccl(ncclSend(sent + at, block, ncclUint8, peer, streams_.comm, streams_.collectives), "ncclSend",
                   streams_.comm);
        check_nccl(ncclRecv(received + at, block, ncclUint8, peer, streams_.comm, streams_.collectives), "ncclRecv",
                   streams_.comm);
      }
      group.end();
    }
    transfer->issued();
    transfer->wait();
  }

  std::unique_ptr<TransferInFlight> start_all_reduce_sum(void* data, std::size_t count, SumType type) override {
    auto transfer = begin();
    void* buffer = transfer->device_view(data, count * element_bytes(type), true, true);
    check_nccl(ncclAllReduce(buffer, buffer, count, nccl_type(type), ncclSum, streams_.comm, streams_.collectives), "ncclAllReduce", streams_.comm);
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
    if (std::all_of(counts.begin(), counts.end(), [&](std::size_t c) { return c == counts[0]; })) {
      check_nccl(ncclAllGather(send, receive, counts[0] * element_bytes, ncclUint8, streams_.comm,
                               streams_.collectives),
                 "ncclAllGather", streams_.comm);
    } else {
      NcclGroup group(streams_.comm);
      std::size_t offset = 0;
      for (std::size_t w = 0; w < counts.size(); ++w) {
        const std::size_t bytes = counts[w] * element_bytes;
        // Every rank knows every count, so all skip the same empty blocks. (A non-root's send
        // buffer is not read; it is given one NCCL can check.)
        if (bytes > 0) {
          check_nccl(ncclBroadcast(w == me ? send : receive + offset, receive + offset, bytes, ncclUint8,
                                   static_cast<int>(w), streams_.comm, streams_.collectives),
                     "ncclBroadcast (all-gather of varying sizes)", streams_.comm);
        }
        offset += bytes;
      }
      group.end();
    }
    transfer->issued();
    return transfer;
  }

  std::unique_ptr<TransferInFlight> start_broadcast(void* data, std::size_t count, std::size_t element_bytes,
                                                    int root) override {
    auto transfer = begin();
    const std::size_t bytes = count * element_bytes;
    void* buffer = transfer->device_view(data, bytes, rank_ == root, true);
    check_nccl(ncclBroadcast(buffer, buffer, bytes, ncclUint8, root, streams_.comm, streams_.collectives), "ncclBroadcast", streams_.comm);
    transfer->issued();
    return transfer;
  }

 private:
  // A transfer whose collective starts after the work queued so far on the backend's stream
  // (whatever wrote the data). The backend's kernels wait for themselves before returning today,
  // so this costs nothing; it keeps the order right should they stop doing so.
  std::unique_ptr<NcclTransfer> begin() {
    cuda::check(cudaEventRecord(computed_, static_cast<cudaStream_t>(cuda::stream())), "cudaEventRecord (NCCL)");
    cuda::check(cudaStreamWaitEvent(streams_.collectives, computed_, 0), "cudaStreamWaitEvent (NCCL)");
    return std::make_unique<NcclTransfer>(streams_);
  }

  // "" unless two ranks named the same GPU (`gpus`: each rank's "<host> <PCI bus id>").
  static std::string shared_gpu(const std::vector<char>& gpus, std::size_t each) {
    const std::size_t ranks = gpus.size() / each;
    for (std::size_t a = 0; a < ranks; ++a) {
      for (std::size_t b = a + 1; b < ranks; ++b) {
        const char* first = gpus.data() + a * each;
        if (*first != '\0' && std::strncmp(first, gpus.data() + b * each, each) == 0) {
          return fmt::format("ranks {} and {} share the GPU {} (NCCL takes one GPU per rank: run as many ranks per "
                             "node as GPUs, e.g. Slurm --gpus-per-task=1, or use comm.transport = \"mpi\")",
                             a, b, first);
        }
      }
    }
    return "";
  }

  // Every rank learns whether any failed; each throws, with its own reason or another rank's word.
  void agree(MPI_Comm comm, const std::string& failure, std::string_view what) {
    int failed = failure.empty() ? 0 : 1;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (NCCL start)");
    if (failed == 0) return;
    release(/*abort=*/true);  // the ranks whose start failed will not take part in a destroy
    if (!failure.empty()) throw Error(fmt::format("comm.transport = \"nccl\" {}: {}", what, failure));
    throw Error(fmt::format("comm.transport = \"nccl\" {}: another rank failed (its own error says why)", what));
  }

  // Destroys the NCCL communicator, or aborts it (`abort`, or while an exception unwinds: see the
  // top of this file), then the streams.
  void release(bool abort = false) noexcept {
    if (streams_.comm != nullptr) {
      if (abort || std::uncaught_exceptions() > 0) {
        ncclCommAbort(streams_.comm);
      } else {
        cudaStreamSynchronize(streams_.collectives);
        if (ncclCommDestroy(streams_.comm) != ncclSuccess) ncclCommAbort(streams_.comm);
      }
      streams_.comm = nullptr;
    }
    if (computed_ != nullptr) cudaEventDestroy(computed_);
    for (cudaStream_t* stream : {&streams_.collectives, &streams_.copies_out}) {
      if (*stream != nullptr) cudaStreamDestroy(*stream);
      *stream = nullptr;
    }
    computed_ = nullptr;
  }

  int rank_ = 0;
  int size_ = 1;
  NcclStreams streams_;
  cudaEvent_t computed_ = nullptr;
};

}  // namespace

std::string nccl_unavailable_reason() { return ""; }

std::unique_ptr<CollectiveTransport> make_nccl_transport(MPI_Comm comm) { return std::make_unique<NcclTransport>(comm); }

std::string nccl_library_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "NCCL (its version unknown)";
  // Since NCCL 2.9: major * 10000 + minor * 100 + patch.
  return fmt::format("NCCL {}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

}  // namespace lowcomm

#pragma once
// The data movement behind the Communicator, one implementation per comm.transport
// (lowcomm/comm/transport.hpp): MPI (mpi_transport.cpp) and NCCL (nccl_transport.cpp, in builds
// with it). A transport only moves bytes: the Communicator checks the arguments, prices, counts
// and throttles every call around it. Every rank calls the same collectives in the same order.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>

#include "lowcomm/comm/transport.hpp"

namespace lowcomm {

// A collective started without blocking. Its buffers must stay untouched until wait() returns.
// Destroying one still in flight waits for it (errors swallowed: a destructor cannot report them).
class TransferInFlight {
 public:
  virtual ~TransferInFlight() = default;
  virtual bool test() = 0;  // lets it progress; true once it has completed
  virtual void wait() = 0;  // blocks until it has completed and its results are in the caller's buffers
};

class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;

  // In place: every element replaced by its sum over the ranks.
  virtual void all_reduce_sum(void* data, std::size_t count, SumType type);
  // Rank w's `count` elements of `element_bytes` each into block w of `all`.
  virtual void all_gather(const void* mine, std::size_t count, std::size_t element_bytes, void* all) = 0;
  // Rank w's counts[w] elements into `all`, one block after another in rank order.
  virtual void all_gather_v(const void* mine, std::span<const std::size_t> counts, std::size_t element_bytes,
                            void* all);
  virtual void broadcast(void* data, std::size_t count, std::size_t element_bytes, int root);
  // `count` elements to rank `to` and as many from rank `from` into `receive`, at once (the ranks
  // at the other ends call it naming this one); a negative rank: nothing moves that way.
  virtual void send_receive(int to, const void* send, int from, void* receive, std::size_t count,
                            std::size_t element_bytes) = 0;
  // Block j (block_count elements) of `send` to rank j, rank j's block for this rank into block j
  // of `receive`.
  virtual void all_to_all(const void* send, std::size_t block_count, std::size_t element_bytes, void* receive) = 0;

  // The same without blocking. all_reduce_sum, all_gather_v and broadcast are their start
  // followed by its wait unless a transport overrides them (MPI's blocking and non-blocking sums
  // may add in different orders).
  virtual std::unique_ptr<TransferInFlight> start_all_reduce_sum(void* data, std::size_t count, SumType type) = 0;
  virtual std::unique_ptr<TransferInFlight> start_all_gather_v(const void* mine, std::span<const std::size_t> counts,
                                                               std::size_t element_bytes, void* all) = 0;
  virtual std::unique_ptr<TransferInFlight> start_broadcast(void* data, std::size_t count, std::size_t element_bytes,
                                                            int root) = 0;
};

// Over `comm`, which must outlive the transport. Collective: every rank makes its transport
// together. make_transport throws ConfigError for a transport this build lacks, and
// lowcomm::Error when NCCL cannot start (no GPU for this rank, NCCL's own errors).
std::unique_ptr<CollectiveTransport> make_mpi_transport(MPI_Comm comm);
std::unique_ptr<CollectiveTransport> make_transport(Transport transport, MPI_Comm comm);

}  // namespace lowcomm

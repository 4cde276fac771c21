// The collectives layer: each call checked (collective_checks.hpp), priced
// (collective_pricing.hpp) and handed to the transport inside the metering layer
// (metered_calls.hpp), which paces it, puts it on the clock and counts it.
#include "lowcomm/comm/communicator.hpp"

#include <fmt/format.h>

#include <utility>

#include "collective_checks.hpp"
#include "collective_transport.hpp"
#include "metered_calls.hpp"

namespace lowcomm {

namespace {

SumType sum_type_16bit(kernels::ValueType format) {
  if (format == kernels::ValueType::F32) throw CommError("all_reduce_16bit: fp32 is not a 16-bit format");
  return format == kernels::ValueType::F16 ? SumType::F16 : SumType::BF16;
}

// One rank's block of a gather in bytes, for each rank.
std::vector<std::uint64_t> block_bytes(std::span<const std::size_t> counts, std::size_t element_bytes) {
  std::vector<std::uint64_t> bytes(counts.size());
  for (std::size_t w = 0; w < counts.size(); ++w) bytes[w] = counts[w] * element_bytes;
  return bytes;
}

}  // namespace

Communicator::Communicator(MPI_Comm comm, CommunicatorOptions options, RunClock* clock)
    : options_(std::move(options)), control_(comm), clock_(clock) {
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  if (options_.all_gather_algorithm == AllGatherAlgorithm::RecursiveDoubling && !is_power_of_two(size_)) {
    throw ConfigError(fmt::format(
        "the recursive_doubling all-gather needs a power-of-two number of ranks, this job has {}; "
        "choose ring or bruck", size_));
  }
  if (clock_ == nullptr) {
    own_clock_ = std::make_unique<RunClock>(control_, options_.mode);
    clock_ = own_clock_.get();
  }
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  // Errors come back as CommError with MPI's message instead of aborting the job.
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  pricing_.emplace(options_.network, options_.all_reduce_algorithm, options_.all_gather_algorithm, rank_, size_);
  calls_ = std::make_unique<MeteredCalls>(options_.mode, options_.keep_records, control_, *clock_);
  try {
    transport_ = make_transport(options_.transport, comm_);
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
  clock_->resume_compute();  // starting the Communicator is not compute
}

Communicator::~Communicator() {
  // A collective still in flight must complete before its transport, communicator and buffers
  // go (destroying a transfer waits for it).
  calls_->abandon();
  transport_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

const CommCounters& Communicator::totals() const { return calls_->meter().totals(); }
const CommCounters& Communicator::totals(CollectiveKind kind) const { return calls_->meter().totals(kind); }
std::span<const CollectiveRecord> Communicator::records() const { return calls_->meter().records(); }
void Communicator::clear_records() { calls_->meter().clear_records(); }

void Communicator::check_gather_v(std::string_view who, std::size_t mine, std::span<const std::size_t> counts,
                                  std::size_t all) const {
  lowcomm::check_gather_v(who, rank_, size_, mine, counts, all);
}

void Communicator::check_matching(std::span<const int> partners) const { lowcomm::check_matching(partners, size_); }

// ---- blocking collectives --------------------------------------------------------------------

void Communicator::all_reduce_elements(void* data, std::size_t count, SumType type) {
  const std::size_t bytes = element_bytes(type);
  calls_->blocking(
      CollectiveKind::AllReduce, count * bytes, [&] { return pricing_->all_reduce(count, bytes); },
      [&] { transport_->all_reduce_sum(data, count, type); });
}

void Communicator::all_reduce_16bit(std::span<std::uint16_t> data, kernels::ValueType format) {
  all_reduce_elements(data.data(), data.size(), sum_type_16bit(format));
}

void Communicator::all_gather_elements(const void* mine, std::size_t count, void* all, std::size_t element_bytes) {
  calls_->blocking(
      CollectiveKind::AllGather, count * element_bytes, [&] { return pricing_->all_gather(count * element_bytes); },
      [&] { transport_->all_gather(mine, count, element_bytes, all); });
}

void Communicator::all_gather_v_elements(const void* mine, std::span<const std::size_t> counts, void* all,
                                         std::size_t element_bytes) {
  const std::vector<std::uint64_t> blocks = block_bytes(counts, element_bytes);
  calls_->blocking(
      CollectiveKind::AllGather, blocks[static_cast<std::size_t>(rank_)],
      [&] { return pricing_->all_gather_v(blocks); },
      [&] { transport_->all_gather_v(mine, counts, element_bytes, all); });
}

std::vector<std::size_t> Communicator::exchange_counts(std::size_t mine) {
  const auto mine64 = static_cast<std::uint64_t>(mine);
  std::vector<std::uint64_t> counts64(static_cast<std::size_t>(size_));
  all_gather(std::span<const std::uint64_t>(&mine64, 1), std::span<std::uint64_t>(counts64));
  return {counts64.begin(), counts64.end()};
}

void Communicator::broadcast_elements(void* data, std::size_t count, std::size_t element_bytes, int root) {
  const RankCost cost = pricing_->broadcast(count * element_bytes, root);  // CommError for a bad root first
  calls_->blocking(
      CollectiveKind::Broadcast, count * element_bytes, [&] { return cost; },
      [&] { transport_->broadcast(data, count, element_bytes, root); });
}

void Communicator::send_pairs_elements(std::span<const int> sends_to, const void* mine, void* theirs,
                                       std::size_t count, std::size_t element_bytes) {
  const int receives_from = sender_to(sends_to, rank_, size_);
  const int sends = sends_to[static_cast<std::size_t>(rank_)];
  calls_->blocking(
      CollectiveKind::PairExchange, sends >= 0 ? count * element_bytes : 0,
      [&] { return pricing_->pair_exchange(sends_to, count * element_bytes); },
      [&] { transport_->send_receive(sends, mine, receives_from, theirs, count, element_bytes); });
}

void Communicator::all_to_all_elements(const void* mine, std::size_t count, void* theirs, std::size_t their_count,
                                       std::size_t element_bytes) {
  const std::size_t block_count = all_to_all_block(count, their_count, size_);
  const std::uint64_t block = block_count * element_bytes;
  // The payload: what this rank hands to the others (its own block stays).
  calls_->blocking(
      CollectiveKind::AllToAll, block * static_cast<std::uint64_t>(size_ - 1),
      [&] { return pricing_->all_to_all(block); },
      [&] { transport_->all_to_all(mine, block_count, element_bytes, theirs); });
}

void Communicator::barrier() {
  calls_->blocking(
      CollectiveKind::Barrier, 0, [&] { return pricing_->barrier(); },
      [&] { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); });
}

// ---- non-blocking collectives ----------------------------------------------------------------

PendingCollective Communicator::start_all_reduce_elements(void* data, std::size_t count, SumType type,
                                                          std::function<void()> finish) {
  const std::size_t bytes = element_bytes(type);
  return {this, calls_->start(CollectiveKind::AllReduce, count * bytes, pricing_->all_reduce(count, bytes),
                              std::move(finish), [&] { return transport_->start_all_reduce_sum(data, count, type); })};
}

PendingCollective Communicator::start_all_reduce_16bit(std::span<std::uint16_t> data, kernels::ValueType format) {
  return start_all_reduce_elements(data.data(), data.size(), sum_type_16bit(format), {});
}

PendingCollective Communicator::start_all_gather_v_elements(const void* mine, std::span<const std::size_t> counts,
                                                            void* all, std::size_t element_bytes) {
  const std::vector<std::uint64_t> blocks = block_bytes(counts, element_bytes);
  return {this, calls_->start(CollectiveKind::AllGather, blocks[static_cast<std::size_t>(rank_)],
                              pricing_->all_gather_v(blocks), {},
                              [&] { return transport_->start_all_gather_v(mine, counts, element_bytes, all); })};
}

PendingCollective Communicator::start_broadcast_elements(void* data, std::size_t count, std::size_t element_bytes,
                                                         int root) {
  return {this, calls_->start(CollectiveKind::Broadcast, count * element_bytes,
                              pricing_->broadcast(count * element_bytes, root), {},
                              [&] { return transport_->start_broadcast(data, count, element_bytes, root); })};
}

void Communicator::progress() { calls_->progress(); }
bool Communicator::test(std::uint64_t id) { return calls_->test(id); }
void Communicator::wait(std::uint64_t id) { calls_->wait(id); }

}  // namespace lowcomm

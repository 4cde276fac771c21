// comm.transport: the transport a test runs with (LOWCOMM_TEST_TRANSPORT, MPI by default; the
// CUDA build runs this once more over NCCL, label gpu) moves every collective's data as MPI does
// and is counted and priced the same; its memory is the test backend's (CUDA managed memory on
// Backend::Cuda) and host memory alike; every result is also checked against its closed form.
// Also: the names, and the clear refusals of a transport this build or the compute backend cannot
// use. Runs at 1, 2 and 3 ranks (over NCCL at 1 and 2, where there are GPUs enough; at one rank
// NCCL only copies locally).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/memory.hpp"
#include "support/test_backend.hpp"

namespace lowcomm {
namespace {

[[maybe_unused]] auto* const skip = testing::AddGlobalTestEnvironment(new test::SkipWithoutTestBackend);

CommunicatorOptions priced() {
  return {.network = NetworkModel(network_scenario("consumer").link), .mode = NetworkMode::Simulate};
}

// A configuration of the network's keys, and the compute keys unless `with_compute` is false (as
// in `bench collectives`, whose schema has none).
Config config_with(std::vector<std::string> overrides, bool with_compute = true) {
  ConfigSchema schema;
  add_network_keys(schema);
  if (with_compute) add_compute_keys(schema);
  return Config::defaults(schema, overrides);
}

TEST(Transport, NamesRoundTrip) {
  for (const Transport t : {Transport::Mpi, Transport::Nccl}) EXPECT_EQ(parse_transport(to_string(t)), t);
  try {
    parse_transport("gloo");
    FAIL() << "parsed 'gloo'";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("use mpi or nccl"), std::string::npos) << e.what();
  }
  EXPECT_EQ(unavailable_reason(Transport::Mpi), "");
  EXPECT_EQ(communicator_options_from_config(config_with({}), 1).transport, Transport::Mpi);
}

TEST(Transport, NcclRefusedWhereItCannotRun) {
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (nccl_version().empty()) {
    // This build has no NCCL: the reason and the Communicator say so (the configuration alone is
    // accepted: `lowcomm plan` prices it without moving data).
    EXPECT_NE(unavailable_reason(Transport::Nccl).find("this build has no NCCL"), std::string::npos);
    const CommunicatorOptions nccl =
        communicator_options_from_config(config_with({"comm.transport=nccl"}, /*with_compute=*/false), ranks);
    EXPECT_EQ(nccl.transport, Transport::Nccl);
    try {
      Communicator refused(MPI_COMM_WORLD, nccl);
      FAIL() << "a Communicator started NCCL in a build without it";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("comm.transport = \"nccl\": this build has no NCCL"), std::string::npos)
          << e.what();
    }
  } else {
    EXPECT_EQ(unavailable_reason(Transport::Nccl), "");
    EXPECT_EQ(communicator_options_from_config(config_with({"comm.transport=nccl", "compute.backend=cuda"}), ranks)
                  .transport,
              Transport::Nccl);
  }
}

// Small whole numbers, so that every sum is exact in any order and in fp16 and bf16: the tested
// transport must then give MPI's bits, whatever order it adds in, and the sum over W ranks is
// (i mod 7) · W(W+1)/2 − 3W.
float value(int rank, std::size_t i) { return static_cast<float>((rank + 1) * static_cast<int>(i % 7) - 3); }
float sum_over_ranks(int ranks, std::size_t i) {
  return static_cast<float>(static_cast<int>(i % 7) * ranks * (ranks + 1) / 2 - 3 * ranks);
}

void expect_same_counts(const Communicator& tested, const Communicator& mpi) {
  for (const CollectiveKind kind :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::Broadcast, CollectiveKind::Barrier}) {
    const CommCounters& a = tested.totals(kind);
    const CommCounters& b = mpi.totals(kind);
    EXPECT_EQ(a.calls, b.calls) << to_string(kind);
    EXPECT_EQ(a.bytes_sent, b.bytes_sent) << to_string(kind);
    EXPECT_EQ(a.bytes_received, b.bytes_received) << to_string(kind);
    EXPECT_EQ(a.modelled_s, b.modelled_s) << to_string(kind);
  }
}

TEST(Transport, MovesWhatMpiMovesAndCountsTheSame) {
  Communicator tested(MPI_COMM_WORLD, test::test_communicator_options(priced()));
  Communicator mpi(MPI_COMM_WORLD, priced());
  const int w = tested.size(), r = tested.rank();
  const kernels::Backend backend = test::test_execution().backend;

  // Sums of floats in the backend's memory and on the host, the average, other types.
  for (const std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(70001)}) {
    kernels::FloatBuffer on_backend(backend, n);
    std::vector<float> on_host(n), expected(n), expected_average(n);
    for (std::size_t i = 0; i < n; ++i) {
      on_backend.data()[i] = on_host[i] = expected[i] = expected_average[i] = value(r, i);
    }
    tested.all_reduce(on_backend.span(), ReduceOp::Sum);
    tested.all_reduce(std::span<float>(on_host), ReduceOp::Average);
    mpi.all_reduce(std::span<float>(expected), ReduceOp::Sum);
    mpi.all_reduce(std::span<float>(expected_average), ReduceOp::Average);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(on_backend.data()[i], sum_over_ranks(w, i)) << "n " << n << " at " << i;
      ASSERT_EQ(on_backend.data()[i], expected[i]) << "n " << n << " at " << i;
      ASSERT_EQ(on_host[i], expected_average[i]) << "n " << n << " at " << i;
    }
  }
  std::vector<std::int64_t> big(5), big_mpi(5);
  std::vector<std::uint32_t> small(3), small_mpi(3);
  std::vector<double> d(4), d_mpi(4);
  for (std::size_t i = 0; i < 5; ++i) big[i] = big_mpi[i] = (std::int64_t(1) << 40) * (r + 1) - static_cast<std::int64_t>(i);
  for (std::size_t i = 0; i < 3; ++i) small[i] = small_mpi[i] = static_cast<std::uint32_t>(r * 3 + i);
  for (std::size_t i = 0; i < 4; ++i) d[i] = d_mpi[i] = 0.25 * r + static_cast<double>(i);
  tested.all_reduce(std::span<std::int64_t>(big), ReduceOp::Sum);
  tested.all_reduce(std::span<std::uint32_t>(small), ReduceOp::Sum);
  tested.all_reduce(std::span<double>(d), ReduceOp::Sum);
  mpi.all_reduce(std::span<std::int64_t>(big_mpi), ReduceOp::Sum);
  mpi.all_reduce(std::span<std::uint32_t>(small_mpi), ReduceOp::Sum);
  mpi.all_reduce(std::span<double>(d_mpi), ReduceOp::Sum);
  EXPECT_EQ(big, big_mpi);
  EXPECT_EQ(small, small_mpi);
  EXPECT_EQ(d, d_mpi);

  // Half-precision sums, on their 16 bits.
  for (const kernels::ValueType format : {kernels::ValueType::F16, kernels::ValueType::BF16}) {
    std::vector<std::uint16_t> bits(257);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      bits[i] = format == kernels::ValueType::F16 ? kernels::float_to_f16(value(r, i)) : kernels::float_to_bf16(value(r, i));
    }
    std::vector<std::uint16_t> bits_mpi = bits;
    tested.all_reduce_16bit(std::span<std::uint16_t>(bits), format);
    mpi.all_reduce_16bit(std::span<std::uint16_t>(bits_mpi), format);
    EXPECT_EQ(bits, bits_mpi) << (format == kernels::ValueType::F16 ? "fp16" : "bf16");
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const float sum = format == kernels::ValueType::F16 ? kernels::f16_to_float(bits[i]) : kernels::bf16_to_float(bits[i]);
      ASSERT_EQ(sum, sum_over_ranks(w, i)) << i;
    }
  }

  // Gathers of equal and of varying sizes (rank 0 sends nothing), and a broadcast from the last rank.
  struct Entry {
    std::uint32_t index;
    float value;
  };
  const std::vector<Entry> mine = {{static_cast<std::uint32_t>(r), value(r, 1)}, {7u, value(r, 2)}};
  std::vector<Entry> all(2 * static_cast<std::size_t>(w)), all_mpi(all.size());
  tested.all_gather(std::span<const Entry>(mine), std::span<Entry>(all));
  mpi.all_gather(std::span<const Entry>(mine), std::span<Entry>(all_mpi));
  EXPECT_EQ(std::memcmp(all.data(), all_mpi.data(), all.size() * sizeof(Entry)), 0);

  for (int k = 0; k < w; ++k) {
    EXPECT_EQ(all[2 * static_cast<std::size_t>(k)].index, static_cast<std::uint32_t>(k));
    EXPECT_EQ(all[2 * static_cast<std::size_t>(k) + 1].value, value(k, 2));
  }

  // Rank 1 sends nothing: the empty block every rank skips alike.
  const auto payload_bytes = [](int rank) { return rank == 1 ? std::size_t(0) : static_cast<std::size_t>(rank + 1) * 3; };
  const std::vector<std::byte> payload(payload_bytes(r), std::byte(0x40 + r));
  std::vector<std::size_t> counts;
  const std::vector<std::byte> gathered = tested.all_gather_v(std::span<const std::byte>(payload), &counts);
  EXPECT_EQ(gathered, mpi.all_gather_v(std::span<const std::byte>(payload)));
  std::vector<std::byte> expected_gathered;
  for (int k = 0; k < w; ++k) expected_gathered.insert(expected_gathered.end(), payload_bytes(k), std::byte(0x40 + k));
  EXPECT_EQ(gathered, expected_gathered);
  ASSERT_EQ(counts.size(), static_cast<std::size_t>(w));

  kernels::FloatBuffer broadcast(backend, 33);
  for (std::size_t i = 0; i < broadcast.size(); ++i) broadcast.data()[i] = value(r, i);
  tested.broadcast(broadcast.span(), w - 1);
  for (std::size_t i = 0; i < broadcast.size(); ++i) ASSERT_EQ(broadcast.data()[i], value(w - 1, i)) << i;
  std::vector<float> broadcast_mpi(33, value(r, 0));
  mpi.broadcast(std::span<float>(broadcast_mpi), w - 1);
  EXPECT_EQ(broadcast_mpi[0], broadcast.data()[0]);

  // Without blocking: two collectives in flight at once, waited for in order.
  kernels::FloatBuffer summed(backend, 4096);
  for (std::size_t i = 0; i < summed.size(); ++i) summed.data()[i] = value(r, i);
  std::vector<std::uint64_t> counts_in(1, static_cast<std::uint64_t>(r + 1)), counts_all(static_cast<std::size_t>(w));
  PendingCollective sum = tested.start_all_reduce(summed.span(), ReduceOp::Sum);
  PendingCollective gather =
      tested.start_all_gather(std::span<const std::uint64_t>(counts_in), std::span<std::uint64_t>(counts_all));
  while (!sum.test()) {
  }
  sum.wait();
  gather.wait();
  std::vector<float> summed_mpi(summed.size());
  for (std::size_t i = 0; i < summed_mpi.size(); ++i) summed_mpi[i] = value(r, i);
  mpi.start_all_reduce(std::span<float>(summed_mpi), ReduceOp::Sum).wait();
  std::vector<std::uint64_t> counts_all_mpi(counts_all.size());
  mpi.start_all_gather(std::span<const std::uint64_t>(counts_in), std::span<std::uint64_t>(counts_all_mpi)).wait();
  for (std::size_t i = 0; i < summed.size(); ++i) {
    ASSERT_EQ(summed.data()[i], summed_mpi[i]) << i;
    ASSERT_EQ(summed.data()[i], sum_over_ranks(w, i)) << i;
  }
  EXPECT_EQ(counts_all, counts_all_mpi);
  for (int k = 0; k < w; ++k) EXPECT_EQ(counts_all[static_cast<std::size_t>(k)], static_cast<std::uint64_t>(k + 1));
  std::vector<double> from_root(3, r == 0 ? 2.5 : 0.0), from_root_mpi = from_root;
  tested.start_broadcast(std::span<double>(from_root), 0).wait();
  mpi.start_broadcast(std::span<double>(from_root_mpi), 0).wait();
  EXPECT_EQ(from_root, std::vector<double>(3, 2.5));
  EXPECT_EQ(from_root, from_root_mpi);

  tested.barrier();
  mpi.barrier();
  expect_same_counts(tested, mpi);
  tested.clock().settle();
  mpi.clock().settle();
  EXPECT_EQ(tested.totals().bytes_sent, mpi.totals().bytes_sent);
}

}  // namespace
}  // namespace lowcomm

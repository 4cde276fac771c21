// `lowcomm bench collectives`: an nccl-tests-style table of all-reduce and all-gather over a
// range of sizes, with the time the network model charges on the configured network, and the
// overhead of lowcomm's Communicator against the raw MPI call measured in the same run.
//
// Conventions (nccl-tests): all-reduce size = bytes reduced per rank; all-gather size = bytes
// gathered in total (W blocks). algbw = size / time; busbw = algbw * 2(W-1)/W for all-reduce and
// * (W-1)/W for all-gather. Time is the slowest rank's mean over the iterations of the best of
// three alternating rounds (lowcomm, raw MPI, lowcomm, raw MPI, ...), which filters out the
// noise of a shared machine without favouring either side.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "bench_timing.hpp"
#include "commands.hpp"
#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/host_names.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/log/run_log.hpp"
#include "machine_rates.hpp"
#include "common/clocked_communicator.hpp"
#include "common/mpi_session.hpp"
#include "common/run_config.hpp"

namespace lowcomm::cli {

namespace {

// bench.* of `bench collectives`, declared once (config/options_schema.hpp).
struct CollectivesOptions {
  std::int64_t min_bytes = 1024;
  std::int64_t max_bytes = 4 << 20;
  std::int64_t factor = 4;
  std::int64_t iterations = 10;
  std::int64_t warmup = 3;
  std::string collectives = "all";
};

const OptionsSchema<CollectivesOptions>& collectives_schema() {
  static const auto schema =
      OptionsSchema<CollectivesOptions>()
          .field("min_bytes", &CollectivesOptions::min_bytes, "smallest message size in bytes",
                 {.min = 4.0, .max = static_cast<double>(1ll << 31)})
          .field("max_bytes", &CollectivesOptions::max_bytes, "largest message size in bytes",
                 {.min = 4.0, .max = static_cast<double>(1ll << 31)})
          .field("factor", &CollectivesOptions::factor, "each size is the previous one times this",
                 {.min = 2.0, .max = 1024.0})
          .field("iterations", &CollectivesOptions::iterations, "timed calls per size and round",
                 {.min = 1.0, .max = static_cast<double>(1 << 20)})
          .field("warmup", &CollectivesOptions::warmup, "untimed calls per size before timing",
                 {.min = 0.0, .max = static_cast<double>(1 << 20)})
          .field("collectives", &CollectivesOptions::collectives, "which collectives to run",
                 {.choices = {"all", "all_reduce", "all_gather"}});
  return schema;
}

constexpr int kRounds = 3;

struct BenchArguments {
  ConfigArguments config;
  std::string log_path;  // optional HDF5 run log of the table
};

ConfigSchema bench_schema() {
  ConfigSchema schema;
  add_network_keys(schema);
  add_bench_collectives_keys(schema);
  return schema;
}

enum class Op { AllReduce, AllGather };

struct Measurement {
  std::uint64_t bytes;  // nccl-tests' size (see above)
  std::uint64_t count;  // float elements in `bytes`
  double time_s;
  double raw_time_s;
  double modelled_s;
  std::vector<std::int64_t> bytes_sent;  // per rank, one call
  bool correct;
};

// Times `iterations` calls of `call` between barriers; returns the slowest rank's mean.
template <class Call>
double time_calls(int iterations, const ControlChannel& control, Call&& call) {
  control.barrier();
  const auto start = SteadyClock::now();
  for (int i = 0; i < iterations; ++i) call();
  return slowest_rank(control, seconds_since(start) / iterations);
}

class CollectiveBench {
 public:
  CollectiveBench(Communicator& comm, const CollectivesOptions& options)
      : comm_(comm), iterations_(static_cast<int>(options.iterations)), warmup_(static_cast<int>(options.warmup)) {
    MPI_Comm_dup(MPI_COMM_WORLD, &raw_);
  }
  ~CollectiveBench() { MPI_Comm_free(&raw_); }

  Measurement measure(Op op, std::uint64_t size_bytes) {
    const int w = comm_.size();
    // Per-rank element counts: all-gather sizes are totals, so each rank sends size / W.
    const std::size_t mine = std::max<std::size_t>(1, op == Op::AllReduce ? size_bytes / 4 : size_bytes / 4 / w);
    std::vector<float> data(mine, 1.0f);
    std::vector<float> gathered(op == Op::AllGather ? mine * static_cast<std::size_t>(w) : 0);
    const int n = static_cast<int>(mine);

    auto lowcomm_call = [&] {
      if (op == Op::AllReduce) comm_.all_reduce(std::span<float>(data), ReduceOp::Sum);
      else comm_.all_gather(std::span<const float>(data), std::span<float>(gathered));
    };
    auto raw_call = [&] {
      if (op == Op::AllReduce) MPI_Allreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, raw_);
      else MPI_Allgather(data.data(), n, MPI_FLOAT, gathered.data(), n, MPI_FLOAT, raw_);
    };
    for (int i = 0; i < warmup_; ++i) {
      lowcomm_call();
      raw_call();
    }
    double best = std::numeric_limits<double>::infinity(), best_raw = best;
    for (int round = 0; round < kRounds; ++round) {
      best = std::min(best, time_calls(iterations_, comm_.control(), lowcomm_call));
      best_raw = std::min(best_raw, time_calls(iterations_, comm_.control(), raw_call));
    }

    // One more call on known data: checks the result and reads this call's accounting.
    std::fill(data.begin(), data.end(), static_cast<float>(comm_.rank() + 1));
    const CommCounters before = comm_.totals();
    lowcomm_call();
    const CommCounters one = comm_.totals() - before;
    bool correct = true;
    if (op == Op::AllReduce) {
      const float expected = static_cast<float>(w) * static_cast<float>(w + 1) / 2.0f;
      correct = std::all_of(data.begin(), data.end(), [&](float x) { return x == expected; });
    } else {
      for (std::size_t i = 0; i < gathered.size(); ++i) correct &= gathered[i] == static_cast<float>(i / mine + 1);
    }
    const bool all_correct = comm_.control().min(std::int32_t{correct ? 1 : 0}) == 1;
    std::vector<std::int64_t> sent = comm_.control().all_gather(static_cast<std::int64_t>(one.bytes_sent));
    const std::uint64_t bytes = (op == Op::AllReduce ? mine : mine * static_cast<std::size_t>(w)) * 4;
    return {bytes, bytes / 4, best, best_raw, one.modelled_s, std::move(sent), all_correct};
  }

 private:
  Communicator& comm_;
  MPI_Comm raw_ = MPI_COMM_NULL;  // the baseline: plain MPI calls, on a communicator of their own
  int iterations_;
  int warmup_;
};

TableSchema table_schema(std::string name, int world_size) {
  return {std::move(name),
          {{"bytes", ColumnType::Int64, 1, "B", "message size (nccl-tests convention)"},
           {"count", ColumnType::Int64, 1, "", "float32 elements in bytes"},
           {"time_s", ColumnType::Float64, 1, "s", "lowcomm Communicator, slowest rank, mean per call"},
           {"raw_mpi_time_s", ColumnType::Float64, 1, "s", "raw MPI call of the same size"},
           {"algbw_GBps", ColumnType::Float64, 1, "GB/s", "bytes / time_s"},
           {"busbw_GBps", ColumnType::Float64, 1, "GB/s", "algbw scaled to bus bandwidth"},
           {"modelled_s", ColumnType::Float64, 1, "s", "time the network model charges"},
           per_rank_column("bytes_sent", ColumnType::Int64, world_size, "B",
                           "bytes each rank sends in one call, by the modelled algorithm")}};
}

void print_header(Op op, const Communicator& comm, const Config& config) {
  const bool reduce = op == Op::AllReduce;
  std::printf("\n# %s (float32%s), %d ranks, moved by %s (rawMPI: the MPI call on the same host buffers); "
              "network: %s; modelled algorithm: %s\n",
              reduce ? "all_reduce" : "all_gather", reduce ? ", sum" : "", comm.size(),
              std::string(to_string(comm.options().transport)).c_str(), describe_network(config).c_str(),
              reduce ? std::string(to_string(comm.options().all_reduce_algorithm)).c_str()
                     : std::string(to_string(comm.options().all_gather_algorithm)).c_str());
  std::printf("# %12s %11s %11s %9s %9s %7s %11s %9s %13s %11s %6s\n", "size(B)", "count",
              "time(us)", "algbw", "busbw", "busbw/", "rawMPI(us)", "overhead", "modelled(ms)",
              "model-bw", "check");
  std::printf("# %12s %11s %11s %9s %9s %7s %11s %9s %13s %11s %6s\n", "", "(elements)", "",
              "(GB/s)", "(GB/s)", "copy", "", "", "", "(MB/s)", "");
}

int run(const BenchArguments& arguments) {
  return run_with_mpi([&](MpiSession& mpi) {
    const ConfigSchema schema = bench_schema();
    const Config config = load_config_on_all_ranks(arguments.config, schema, mpi.control());
    std::optional<ClockedCommunicator> clocked;  // the Communicator and the clock it runs on
    Communicator* comm = nullptr;
    const CollectivesOptions options = collectives_schema().read(config, "bench");
    const auto min_bytes = static_cast<std::uint64_t>(options.min_bytes);
    const auto max_bytes = static_cast<std::uint64_t>(options.max_bytes);
    agree_on_failure(mpi.control(), [&] {
      if (min_bytes > max_bytes) {
        throw ConfigError(fmt::format("bench.min_bytes ({}) is larger than bench.max_bytes ({}): "
                                      "lower min_bytes or raise max_bytes", min_bytes, max_bytes));
      }
      clocked.emplace(config, mpi.control());
      comm = &clocked->comm;
    });

    const int w = mpi.size();
    const std::string& which = options.collectives;
    std::vector<Op> ops;
    if (which != "all_gather") ops.push_back(Op::AllReduce);
    if (which != "all_reduce") ops.push_back(Op::AllGather);

    double copy_bandwidth = 0;
    if (mpi.rank() == 0) {
      copy_bandwidth = measure_copy_bandwidth();
      std::printf("# copy bandwidth of one core on this node: %.2f GB/s (%s; busbw/copy compares "
                  "against it)\n", copy_bandwidth, copy_bandwidth_method().c_str());
    }
    const std::vector<std::string> hosts = gather_host_names(mpi.control());  // waits for rank 0 too
    std::optional<RunLog> log;
    if (!arguments.log_path.empty()) {
      on_rank_zero_agreed(mpi.control(), [&] {
        LogSchema log_schema{{table_schema("all_reduce", w), table_schema("all_gather", w)}, {}};
        RunMetadata metadata = RunMetadata::for_this_process(config.to_toml(), w, hosts, 0);
        metadata.extra["command"] = "bench collectives";
        metadata.extra["network"] = describe_network(config);
        metadata.extra["copy_bandwidth_GBps"] = fmt::format("{:.3f}", copy_bandwidth);
        log.emplace(RunLog::create(arguments.log_path, log_schema, metadata));
      });
    }

    CollectiveBench bench(*comm, options);
    bool all_correct = true;
    for (Op op : ops) {
      if (mpi.rank() == 0) print_header(op, *comm, config);
      for (std::uint64_t size = min_bytes; size <= max_bytes; size *= static_cast<std::uint64_t>(options.factor)) {
        const Measurement m = bench.measure(op, size);
        all_correct &= m.correct;
        if (mpi.rank() != 0) continue;
        const double bus = op == Op::AllReduce ? 2.0 * (w - 1) / w : (w - 1.0) / w;
        const double algbw = static_cast<double>(m.bytes) / m.time_s / 1e9;
        const double model_bw = m.modelled_s > 0 ? static_cast<double>(m.bytes) / m.modelled_s / 1e6
                                                 : std::numeric_limits<double>::infinity();
        std::printf("  %12llu %11llu %11.1f %9.3f %9.3f %6.1f%% %11.1f %8.1f%% %13.3f %11.2f %6s\n",
                    static_cast<unsigned long long>(m.bytes), static_cast<unsigned long long>(m.count),
                    m.time_s * 1e6, algbw, algbw * bus, 100.0 * algbw * bus / copy_bandwidth,
                    m.raw_time_s * 1e6,
                    (m.time_s / m.raw_time_s - 1.0) * 100.0, m.modelled_s * 1e3, model_bw,
                    m.correct ? "ok" : "WRONG");
        std::fflush(stdout);
        if (log) {
          RowValues row = log->row(op == Op::AllReduce ? "all_reduce" : "all_gather");
          row.set("bytes", m.bytes)
              .set("count", m.count)
              .set("time_s", m.time_s)
              .set("raw_mpi_time_s", m.raw_time_s)
              .set("algbw_GBps", algbw)
              .set("busbw_GBps", algbw * bus)
              .set("modelled_s", m.modelled_s)
              .set("bytes_sent", std::span<const std::int64_t>(m.bytes_sent));
          log->write_row(row);
        }
      }
    }
    if (log) {
      log->close();
      std::printf("\n# run log: %s\n", std::filesystem::absolute(arguments.log_path).c_str());
    }
    agree_on_failure(mpi.control(), [&] {  // all_correct is the same on every rank
      if (!all_correct) throw Error("a collective returned wrong data (see the check column)");
    });
  });
}

}  // namespace

void add_bench_collectives_keys(ConfigSchema& schema) { collectives_schema().add_to(schema, "bench"); }

void add_bench_collectives_command(CLI::App& bench) {
  CLI::App* collectives = bench.add_subcommand(
      "collectives", "nccl-tests-style table of all-reduce and all-gather, with modelled network time");
  static BenchArguments arguments;  // CLI11 binds options to storage that outlives parsing
  add_config_arguments(*collectives, arguments.config);
  collectives->add_option("--log", arguments.log_path, "also write the table to this HDF5 run log");
  collectives->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

// `lowcomm bench compressors`: compress + aggregate + decompress throughput of every compressor
// on transformer-shaped tensors (GPT-2 small: 768×768 attention, 768×3072 and 3072×768 MLP,
// 50304×768 embedding, a 768 bias), through the same CompressedAllReduce that training uses, next
// to the machine's copy bandwidth and GEMM rate measured in the same run.
//
// Throughput = fp32 input bytes / time of one CompressedAllReduce::run (encode, the collectives,
// decode), the slowest rank's best of the iterations. "codec" is the encode + decode share.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

#include "bench_timing.hpp"
#include "commands.hpp"
#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "machine_rates.hpp"
#include "common/clocked_communicator.hpp"
#include "common/mpi_session.hpp"
#include "common/run_config.hpp"

namespace lowcomm::cli {

namespace {

// bench.* of `bench compressors`, declared once (config/options_schema.hpp).
struct CompressorBenchOptions {
  std::int64_t iterations = 3;
  std::string shapes = "transformer";
  std::string compressors = "all";
};

const OptionsSchema<CompressorBenchOptions>& compressor_bench_schema() {
  static const auto schema =
      OptionsSchema<CompressorBenchOptions>()
          .field("iterations", &CompressorBenchOptions::iterations,
                 "timed runs per compressor and shape (the best is kept)", {.min = 1.0, .max = 1000.0})
          .field("shapes", &CompressorBenchOptions::shapes,
                 "transformer: GPT-2 small's tensor shapes; test: two small ones for tests",
                 {.choices = {"transformer", "test"}})
          .field("compressors", &CompressorBenchOptions::compressors, "comma-separated compressor names, or all");
  return schema;
}

}  // namespace

void add_bench_compressors_keys(ConfigSchema& schema) {
  schema.integer("seed", 0, "shared seed given to the compressors", 0);
  compressor_bench_schema().add_to(schema, "bench");
}

namespace {

ConfigSchema bench_compressors_schema() {
  ConfigSchema schema;
  add_network_keys(schema);
  CompressorRegistry::global().add_config_keys(schema);
  add_compute_keys(schema);
  add_bench_compressors_keys(schema);
  return schema;
}

std::vector<TensorInfo> shapes(const std::string& which) {
  if (which == "test") return {{"attn", {48, 48}}, {"bias", {48}}};
  return {{"attn.c_proj", {768, 768}},  {"mlp.c_fc", {768, 3072}}, {"mlp.c_proj", {3072, 768}},
          {"wte", {50304, 768}}, {"ln.bias", {768}}};
}

std::vector<std::string> chosen_compressors(const std::string& list) {
  std::vector<std::string> names;
  if (list == "all") {
    for (const CompressorInfo* info : CompressorRegistry::global().all()) names.push_back(info->name);
    return names;
  }
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    CompressorRegistry::global().find(name);  // throws, listing the registered ones
    names.push_back(name);
  }
  return names;
}

struct Result {
  double seconds = std::numeric_limits<double>::infinity();
  SyncReport report;
};

Result measure(Communicator& comm, const Config& config, const std::string& name, const TensorInfo& tensor,
               int iterations) {
  const ConfigSchema schema = bench_compressors_schema();
  const Config own = Config::from_string(config.to_toml(), schema, std::vector<std::string>{"compressor.name=" + name});
  const CompressorSelection selection = compressor_selection(own);
  CompressedAllReduce sync(comm, CompressorRegistry::global().create(own), {tensor}, selection.granularity,
                           selection.bucket_bytes, static_cast<std::uint64_t>(own.get_int("seed")),
                           execution_context_from_config(own));
  std::mt19937 random(static_cast<unsigned>(comm.rank() + 1));
  std::normal_distribution<float> normal;
  std::vector<float> gradient(static_cast<std::size_t>(tensor.numel())), aggregate(gradient.size());
  for (float& x : gradient) x = normal(random);
  const std::vector<std::span<const float>> in{gradient};
  const std::vector<std::span<float>> out{aggregate};
  Result best;
  for (int i = 0; i <= iterations; ++i) {  // run 0 warms up (first-touch, caches, warm start)
    comm.control().barrier();
    const auto start = SteadyClock::now();
    const SyncReport report = sync.run(static_cast<std::uint64_t>(i), in, out);
    const double seconds = slowest_rank(comm.control(), seconds_since(start));
    if (i > 0 && seconds < best.seconds) best = {seconds, report};
  }
  return best;
}

void run(const ConfigArguments& arguments) {
  run_with_mpi([&](MpiSession& mpi) {
    const Config config = load_config_on_all_ranks(arguments, bench_compressors_schema(), mpi.control());
    std::vector<std::string> names;
    std::optional<ClockedCommunicator> clocked;  // the Communicator and the clock it runs on
    Communicator* comm = nullptr;
    agree_on_failure(mpi.control(), [&] {
      names = chosen_compressors(compressor_bench_schema().read(config, "bench").compressors);
      clocked.emplace(config, mpi.control());
      comm = &clocked->comm;
    });
    double copy = 0, gemm = 0;
    if (mpi.rank() == 0) {
      const ExecutionContext execution = execution_context_from_config(config);
      copy = measure_copy_bandwidth(execution);  // the memory the kernels compute in: HBM on cuda
      gemm = measure_sgemm_gflops(execution);
      std::printf("# lowcomm bench compressors: %d ranks x %d threads; network: %s; granularity %s\n", mpi.size(),
                  omp_get_max_threads(), describe_network(config).c_str(),
                  std::string(to_string(compressor_selection(config).granularity)).c_str());
      std::printf("# this node: copy %.2f GB/s (%s); sgemm %.1f GFLOP/s (768^3, %s kernel)\n", copy,
                  copy_bandwidth_method(execution).c_str(), gemm, config.get_string("compute.backend").c_str());
      std::printf("# cpu kernels: matrix products %s; vector loops %s\n",
                  std::string(kernels::cpu_matrix_products()).c_str(), std::string(simd_clone_in_use()).c_str());
      std::printf("# %-9s %-12s %9s %12s %8s %10s %8s %7s %10s %9s %12s\n", "compressor", "shape", "in(MB)",
                  "payload(B)", "ratio", "time(ms)", "GB/s", "%copy", "codec(ms)", "comm(ms)", "modelled(ms)");
    }
    const CompressorBenchOptions options = compressor_bench_schema().read(config, "bench");
    const int iterations = static_cast<int>(options.iterations);
    for (const std::string& name : names) {
      for (const TensorInfo& tensor : shapes(options.shapes)) {
        std::optional<Result> result;
        std::string skipped;
        agree_on_failure(mpi.control(), [&] {
          try {
            result = measure(*comm, config, name, tensor, iterations);
          } catch (const ConfigError& unsupported) {
            skipped = unsupported.what();  // e.g. a granularity this compressor does not take
          }
        });
        if (mpi.rank() != 0) continue;
        const std::string shape = fmt::format("{}", fmt::join(tensor.shape, "x"));
        if (!result) {
          std::printf("  %-9s %-12s skipped: %s\n", name.c_str(), shape.c_str(), skipped.c_str());
          continue;
        }
        const double bytes = static_cast<double>(tensor.numel()) * sizeof(float);
        const double gbps = bytes / result->seconds / 1e9;
        std::printf("  %-9s %-12s %9.2f %12llu %8.1f %10.2f %8.2f %6.1f%% %10.2f %9.2f %12.2f\n", name.c_str(),
                    shape.c_str(), bytes / 1e6, static_cast<unsigned long long>(result->report.payload_bytes),
                    bytes / static_cast<double>(std::max<std::uint64_t>(result->report.payload_bytes, 1)),
                    result->seconds * 1e3, gbps, 100.0 * gbps / copy, result->report.codec_s * 1e3,
                    result->report.comm.measured_s * 1e3, result->report.comm.modelled_s * 1e3);
        std::fflush(stdout);
      }
    }
  });
}

}  // namespace

void add_bench_compressors_command(CLI::App& bench) {
  CLI::App* compressors = bench.add_subcommand(
      "compressors", "throughput of every compressor on transformer-shaped tensors, vs copy and GEMM rates");
  static ConfigArguments arguments;  // CLI11 binds options to storage that outlives parsing
  add_config_arguments(*compressors, arguments);
  compressors->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

// `lowcomm bench strategies`: one synchronisation step of every strategy on a GPT-2-small-shaped
// parameter set (124M parameters, the tensors of the 12-layer, 768-wide model), next to the parts
// it is made of: the compressor's math (encode + decode) and the raw collectives, plus the bytes
// each rank sends per step against dense all-reduce (data_parallel with `none`, measured in the
// same run). DiLoCo is measured on a synchronising step (H = 1); it sends those bytes once per H
// steps. Times are the slowest rank's best of bench.iterations steps after one warm-up step.
#include <fmt/format.h>

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
#include "lowcomm/strategy/registry.hpp"
#include "common/clocked_communicator.hpp"
#include "common/mpi_session.hpp"
#include "common/run_config.hpp"

namespace lowcomm::cli {

namespace {

// bench.* of `bench strategies`, declared once (config/options_schema.hpp).
struct StrategyBenchOptions {
  std::int64_t iterations = 2;
  std::string model = "gpt2-small";
  std::string cases = "all";
};

const OptionsSchema<StrategyBenchOptions>& strategy_bench_schema() {
  static const auto schema =
      OptionsSchema<StrategyBenchOptions>()
          .field("iterations", &StrategyBenchOptions::iterations, "timed steps per strategy (the best is kept)",
                 {.min = 1.0, .max = 1000.0})
          .field("model", &StrategyBenchOptions::model,
                 "gpt2-small: GPT-2 124M's tensors; test: three small ones for tests (not the tiny model preset)",
                 {.choices = {"gpt2-small", "test"}})
          .field("cases", &StrategyBenchOptions::cases, "comma-separated case names (see --help), or all");
  return schema;
}

}  // namespace

void add_bench_strategies_keys(ConfigSchema& schema) {
  schema.integer("seed", 0, "shared seed", 0);
  strategy_bench_schema().add_to(schema, "bench");
}

namespace {

ConfigSchema bench_strategies_schema() {
  ConfigSchema schema;
  add_network_keys(schema);
  add_strategy_keys(schema, "sgd");
  add_bench_strategies_keys(schema);
  return schema;
}

std::vector<TensorInfo> model_tensors(const std::string& which) {
  if (which == "test") return {{"wte", {64, 32}}, {"c_attn", {96, 32}}, {"bias", {96}}};
  const std::int64_t c = 768, layers = 12;
  std::vector<TensorInfo> tensors{{"wte", {50257, c}}, {"wpe", {1024, c}}};
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string h = fmt::format("h.{}.", l);
    tensors.insert(tensors.end(), {{h + "ln_1.weight", {c}}, {h + "ln_1.bias", {c}},
                                   {h + "attn.c_attn.weight", {3 * c, c}}, {h + "attn.c_attn.bias", {3 * c}},
                                   {h + "attn.c_proj.weight", {c, c}}, {h + "attn.c_proj.bias", {c}},
                                   {h + "ln_2.weight", {c}}, {h + "ln_2.bias", {c}},
                                   {h + "mlp.c_fc.weight", {4 * c, c}}, {h + "mlp.c_fc.bias", {4 * c}},
                                   {h + "mlp.c_proj.weight", {c, 4 * c}}, {h + "mlp.c_proj.bias", {c}}});
  }
  tensors.insert(tensors.end(), {{"ln_f.weight", {c}}, {"ln_f.bias", {c}}});
  return tensors;
}

struct Case {
  std::string name;
  std::vector<ConfigSetting> settings;
};

// The first case is the dense baseline the others' bytes are compared with.
const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases{
      {"dp/none", {{"strategy.name", "data_parallel"}, {"compressor.name", "none"}}},
      {"dp/topk", {{"strategy.name", "data_parallel"}, {"compressor.name", "topk"}, {"compressor.topk.error_feedback", true}}},
      {"dp/powersgd", {{"strategy.name", "data_parallel"}, {"compressor.name", "powersgd"}}},
      {"demo/dct_topk", {{"strategy.name", "demo"}}},
      {"demo/1bit", {{"strategy.name", "demo"}, {"strategy.demo.wire", "compact_1bit"}}},
      {"diloco/none", {{"strategy.name", "diloco"}, {"strategy.diloco.inner_steps", std::int64_t{1}}}},
      {"diloco/bf16", {{"strategy.name", "diloco"}, {"strategy.diloco.inner_steps", std::int64_t{1}},
                       {"compressor.none.value_type", "bf16"}}},
  };
  return cases;
}

std::vector<Case> chosen_cases(const std::string& list) {
  if (list == "all") return all_cases();
  std::vector<Case> chosen{all_cases().front()};
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    const auto found = std::ranges::find(all_cases(), name, &Case::name);
    if (found == all_cases().end()) {
      std::vector<std::string> names;
      for (const Case& c : all_cases()) names.push_back(c.name);
      throw ConfigError(fmt::format("bench.cases: unknown case '{}'; the cases are {}", name, fmt::join(names, ", ")));
    }
    if (found != all_cases().begin()) chosen.push_back(*found);
  }
  return chosen;
}

struct Result {
  double seconds = std::numeric_limits<double>::infinity();
  StrategyStepReport report;
};

Result measure(Communicator& comm, const Config& config, const Case& c, const std::vector<TensorInfo>& tensors,
               std::vector<float>& params, const std::vector<float>& grads, int iterations) {
  const Config own = config.with(c.settings);
  const std::unique_ptr<Strategy> strategy = StrategyRegistry::global().create(
      {.comm = comm, .tensors = tensors, .config = own, .seed = static_cast<std::uint64_t>(own.get_int("seed")),
       .execution = execution_context_from_config(own)});
  std::vector<std::span<float>> p;
  std::vector<std::span<const float>> g;
  std::size_t offset = 0;
  for (const TensorInfo& t : tensors) {
    const auto n = static_cast<std::size_t>(t.numel());
    p.emplace_back(params.data() + offset, n);
    g.emplace_back(grads.data() + offset, n);
    offset += n;
  }
  Result best;
  for (int i = 0; i <= iterations; ++i) {  // step 0 warms up (first touch, warm starts)
    comm.control().barrier();
    const auto start = SteadyClock::now();
    strategy->before_forward(static_cast<std::uint64_t>(i), 1e-4, p);
    const StrategyStepReport report = strategy->step(static_cast<std::uint64_t>(i), 1e-4, p, g);
    const double seconds = slowest_rank(comm.control(), seconds_since(start));
    if (i > 0 && seconds < best.seconds) best = {seconds, report};
  }
  return best;
}

void run(const ConfigArguments& arguments) {
  run_with_mpi([&](MpiSession& mpi) {
    const Config config = load_config_on_all_ranks(arguments, bench_strategies_schema(), mpi.control());
    std::vector<Case> cases;
    std::optional<ClockedCommunicator> clocked;  // the Communicator and the clock it runs on
    Communicator* comm = nullptr;
    agree_on_failure(mpi.control(), [&] {
      cases = chosen_cases(strategy_bench_schema().read(config, "bench").cases);
      clocked.emplace(config, mpi.control());
      comm = &clocked->comm;
    });
    const StrategyBenchOptions options = strategy_bench_schema().read(config, "bench");
    const std::vector<TensorInfo> tensors = model_tensors(options.model);
    std::size_t n = 0;
    for (const TensorInfo& t : tensors) n += static_cast<std::size_t>(t.numel());
    std::vector<float> params(n), grads(n);
    std::mt19937 random(static_cast<unsigned>(mpi.rank() + 1));
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (float& x : grads) x = normal(random);
    if (mpi.rank() == 0) {
      std::printf("# lowcomm bench strategies: %d ranks, %s (%zu tensors, %.1fM parameters); network: %s\n",
                  mpi.size(), options.model.c_str(), tensors.size(), static_cast<double>(n) / 1e6,
                  describe_network(config).c_str());
      std::printf("# %-14s %10s %10s %10s %10s %12s %14s %9s\n", "case", "step(ms)", "codec(ms)", "comm(ms)",
                  "update(ms)", "modelled(ms)", "sent(B/step)", "vs dense");
    }
    const int iterations = static_cast<int>(options.iterations);
    double dense_sent = 0;
    for (const Case& c : cases) {
      std::ranges::fill(params, 0.0f);
      Result result;
      agree_on_failure(mpi.control(), [&] { result = measure(*comm, config, c, tensors, params, grads, iterations); });
      const auto sent = static_cast<double>(result.report.sync.comm.bytes_sent);
      if (dense_sent == 0) dense_sent = sent;
      if (mpi.rank() != 0) continue;
      std::printf("  %-14s %10.1f %10.1f %10.1f %10.1f %12.1f %14.0f %8.1fx\n", c.name.c_str(), result.seconds * 1e3,
                  result.report.sync.codec_s * 1e3, result.report.sync.comm.measured_s * 1e3,
                  result.report.update_s * 1e3, result.report.sync.comm.modelled_s * 1e3, sent,
                  sent > 0 ? dense_sent / sent : 0.0);
      std::fflush(stdout);
    }
  });
}

}  // namespace

void add_bench_strategies_command(CLI::App& bench) {
  CLI::App* strategies = bench.add_subcommand(
      "strategies", "one synchronisation step of every strategy on GPT-2-small-shaped parameters: step, "
                    "compressor math, collectives, bytes vs dense all-reduce");
  static ConfigArguments arguments;  // CLI11 binds options to storage that outlives parsing
  add_config_arguments(*strategies, arguments);
  std::vector<std::string> names;
  for (const Case& c : all_cases()) names.push_back(c.name);
  strategies->footer(fmt::format("Cases (bench.cases): {}. Keys: bench.model, bench.iterations, network.*.",
                                 fmt::join(names, ", ")));
  strategies->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

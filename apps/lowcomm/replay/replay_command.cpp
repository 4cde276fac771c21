// `lowcomm replay`: pushes a recorded gradient trace through a strategy and its compressor, as a
// training run would, without the model: rank w reads its own gradients step by step and hands
// them to the configured strategy (strategy.*, default data_parallel with optimizer sgd, so
// x <- x - lr * aggregate) on the configured network. Rank 0 writes what a study of the method
// needs: the parameters on every rank after every step, the bytes each rank sent and received,
// and how far the step's update is from a dense SGD step (docs/replay.md).
//
// The dense mean for the metrics goes through the uncounted control channel, so it is not
// counted as traffic. The output is written to OUT.partial and renamed to OUT
// only once complete: a file named OUT is always a finished replay.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "lowcomm/comm/collective_schedule.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "lowcomm/log/gradient_trace.hpp"
#include "lowcomm/comm/host_names.hpp"
#include "lowcomm/log/replay_output.hpp"
#include "common/clocked_communicator.hpp"
#include "common/mpi_session.hpp"
#include "common/run_config.hpp"
#include "common/step_recorder.hpp"

namespace lowcomm::cli {

namespace {

struct ReplayArguments {
  ConfigArguments config;
  std::string trace;
  std::string out;
  bool force = false;
};

ConfigSchema replay_schema() {
  ConfigSchema schema;
  add_network_keys(schema);
  add_strategy_keys(schema, "sgd");
  add_replay_keys(schema);
  return schema;
}

}  // namespace

namespace {

// replay.*, declared once (config/options_schema.hpp).
struct ReplayOptions {
  double lr = 0.1;
  std::optional<std::int64_t> steps;
  std::string nonfinite = "stop";
};

const OptionsSchema<ReplayOptions>& replay_options_schema() {
  static const auto schema =
      OptionsSchema<ReplayOptions>()
          .field("lr", &ReplayOptions::lr,
                 "learning rate of every step (> 0); with the default data_parallel + sgd: x <- x - lr * aggregate")
          .field("steps", &ReplayOptions::steps, "replay only the first N steps of the trace (default: all)",
                 {.min = 1.0})
          .field("nonfinite", &ReplayOptions::nonfinite,
                 "a step whose gradient holds NaN or Inf on some rank: stop (exit 3, no output) or skip it (not "
                 "applied; its row has no traffic and NaN metrics)",
                 {.choices = {"stop", "skip"}});
  return schema;
}

}  // namespace

void add_replay_keys(ConfigSchema& schema) {
  replay_options_schema().add_to(schema, "replay");
  schema.integer("seed", 0, "shared seed given to the compressors", 0);
}

namespace {

// What each rank contributes to a step's row besides its traffic (the step recorder's).
struct RankMetrics {
  std::int64_t payload_bytes = 0;
  double relative_error = 0;
  double cosine = 0;
  double cumulative_relative_error = 0;  // of the updates so far against the dense means so far
};

// How far the step's update (x_before - x_after) / lr is from the dense mean gradient (a dense SGD
// step), over all tensors at once; with data_parallel and plain SGD the update is the aggregate.
// relative_error = |a - m| / |m|; cosine = a.m / (|a| |m|). A zero mean makes both undefined:
// an exact (zero) aggregate then counts as relative error 0 and cosine 1, any other as
// relative error +inf and cosine 0; a zero aggregate of a non-zero mean has cosine 0.
template <class A, class M>
std::pair<double, double> compare(std::span<const A> aggregate, std::span<const M> mean) {
  double diff2 = 0, mean2 = 0, agg2 = 0, dot = 0;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    const double a = aggregate[i], m = mean[i];
    diff2 += (a - m) * (a - m);
    mean2 += m * m;
    agg2 += a * a;
    dot += a * m;
  }
  if (mean2 == 0) {
    return agg2 == 0 ? std::pair{0.0, 1.0}
                     : std::pair{std::numeric_limits<double>::infinity(), 0.0};
  }
  const double relative_error = std::sqrt(diff2 / mean2);
  const double cosine = agg2 == 0 ? 0.0 : dot / (std::sqrt(agg2) * std::sqrt(mean2));
  return {relative_error, cosine};
}

// The first tensor whose values hold NaN or Inf, or "" when all are finite.
std::string nonfinite_tensor(std::span<const std::span<float>> tensors, std::span<const TensorInfo> infos) {
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    if (!std::ranges::all_of(tensors[t], [](float g) { return std::isfinite(g); })) return infos[t].name;
  }
  return "";
}

// What each rank would send per step without compression: one fused float32 all-reduce of the
// whole model by the configured algorithm (what compressor `none` at any granularity sends).
std::vector<std::int64_t> dense_bytes_sent(const CommunicatorOptions& options, int world_size,
                                           std::uint64_t count) {
  std::vector<std::int64_t> sent(static_cast<std::size_t>(world_size), 0);
  all_reduce_rounds(options.all_reduce_algorithm, world_size, count, sizeof(float),
                    [&](std::span<const Transfer> round) {
                      for (const Transfer& t : round) {
                        const auto source = static_cast<std::size_t>(t.source);
                        sent[source] += static_cast<std::int64_t>(t.bytes);
                      }
                    });
  return sent;
}

int run(const ReplayArguments& arguments) {
  return run_with_mpi([&](MpiSession& mpi) {
    const ConfigSchema schema = replay_schema();
    const Config config = load_config_on_all_ranks(arguments.config, schema, mpi.control());
    const ReplayOptions options = replay_options_schema().read(config, "replay");
    const int w = mpi.size(), rank = mpi.rank();

    std::optional<GradientTraceReader> trace;
    std::int64_t steps = 0;
    agree_on_failure(mpi.control(), [&] {
      // Inclusive schema bounds cannot say "> 0".
      if (!(options.lr > 0)) throw ConfigError(fmt::format("replay.lr = {} must be positive", options.lr));
      trace.emplace(arguments.trace);
      if (trace->world_size() != w) {
        throw ConfigError(fmt::format(
            "the trace {} was recorded by {} ranks (its world_size attribute) but this job has "
            "{}: start it with mpiexec -n {}", arguments.trace, trace->world_size(), w,
            trace->world_size()));
      }
      steps = trace->steps();
      if (steps == 0) throw Error(fmt::format("the trace {} holds no steps", arguments.trace));
      if (options.steps) {
        const std::int64_t wanted = *options.steps;
        if (wanted > steps) {
          throw ConfigError(fmt::format("replay.steps = {} but the trace {} holds {} steps: "
                                        "lower replay.steps or leave it unset", wanted,
                                        arguments.trace, steps));
        }
        steps = wanted;
      }
    });

    const std::vector<TensorInfo>& tensors = trace->tensors();
    const std::int64_t total = total_numel(tensors);
    const auto n = static_cast<std::size_t>(total);

    std::optional<ClockedCommunicator> network;  // the run's clock and the Communicator on it
    std::unique_ptr<Strategy> strategy;
    const std::string strategy_name = config.get_string("strategy.name");
    const CompressorSelection compressor = compressor_selection(config);
    agree_on_failure(mpi.control(), [&] {
      if (total > INT_MAX) {
        throw Error(fmt::format("the trace's tensors hold {} values per rank; replay handles at "
                                "most {} (one MPI message)", total, INT_MAX));
      }
      const CommunicatorOptions comm_options = communicator_options_from_config(config, w);
      const ClockOptions clock_options = clock_options_from_config(config, w);
      if (clock_options.compute_flops_per_s) {
        throw ConfigError("cluster.compute_tflops prices a model's FLOPs, and a replay has no model: give the "
                          "training step's compute as cluster.step_compute_ms");
      }
      network.emplace(comm_options, clock_options, mpi.control());
      strategy = StrategyRegistry::global().create(
          {.comm = network->comm, .tensors = tensors, .config = config,
           .seed = static_cast<std::uint64_t>(config.get_int("seed")),
           .execution = execution_context_from_config(config)});
    });

    std::vector<float> params(n), grads(n), update(n), mean(n);
    // The cumulative metric: every update and every dense mean so far, summed in double.
    std::vector<double> total_update(n, 0.0), total_mean(n, 0.0);
    const std::vector<std::span<float>> param_views = tensor_views(std::span(params), tensors);
    const std::vector<std::span<float>> grad_views = tensor_views(std::span(grads), tensors);
    const std::vector<std::span<const float>> grad_inputs(grad_views.begin(), grad_views.end());
    agree_on_failure(mpi.control(), [&] {
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        trace->read_initial_values(t, param_views[t]);
      }
    });

    std::optional<ReplayOutput> output;
    const std::vector<std::int64_t> dense_sent = dense_bytes_sent(network->comm.options(), w, n);
    const std::vector<std::string> hosts = gather_host_names(mpi.control());
    on_rank_zero_agreed(mpi.control(), [&] {
      const std::filesystem::path out(arguments.out);
      std::error_code error;
      if (std::filesystem::equivalent(out, arguments.trace, error)) {
        throw ConfigError(fmt::format("--out {} is the trace itself: choose another path",
                                      arguments.out));
      }
      if (std::filesystem::exists(out, error) && !arguments.force) {
        throw ConfigError(fmt::format("--out {} exists: pass --force to replace it, or choose "
                                      "another path", arguments.out));
      }
      RunMetadata metadata = RunMetadata::for_this_process(
          config.to_toml(), w, hosts, static_cast<std::uint64_t>(config.get_int("seed")));
      metadata.extra = {{"kind", "replay"},
                        {"trace", std::filesystem::absolute(arguments.trace).string()},
                        {"strategy", strategy_name},
                        {"compressor", compressor.name},
                        {"network", describe_network(config)}};
      output.emplace(out, tensors, steps, metadata, dense_sent);
      // Every rank starts from the same values, read from the same file.
      for (int r = 0; r < w; ++r) output->write_params(0, r, params);
    });

    // The dense mean and the gathers to rank 0 are bookkeeping: the uncounted control channel.
    const ControlChannel& control = mpi.control();
    StepRecorder recorder(network->clock, control);
    const double lr = options.lr;
    const bool skip_nonfinite = options.nonfinite == "skip";
    double sum_relative_error = 0, sum_cosine = 0, sum_sent = 0, last_cumulative_error = 0;
    std::int64_t skipped = 0;
    // Rank 0 writes every rank's parameters after the step and the step's row. It takes every
    // rank's parameters even after a failed write, or the senders would wait forever.
    // Returns every rank's metrics on rank 0 (empty elsewhere), gathered with the traffic.
    auto write_rows = [&](std::int64_t step, const RankMetrics& mine, const StepTraffic& traffic) {
      std::optional<RowValues> row;
      if (rank == 0) row.emplace(output->step_row());
      std::vector<RankMetrics> all;
      for (const auto& [r_traffic, r] : recorder.record(traffic, mine,
                                                         row ? &*row : nullptr)) {
        sum_sent += static_cast<double>(r_traffic.sent);
        all.push_back(r);
      }
      std::exception_ptr failure;
      control.stream_to_root(params, [&](int r, std::span<const float> values) {
        if (failure) return;
        try {
          output->write_params(step + 1, r, values);
        } catch (...) {
          failure = std::current_exception();
        }
      });
      on_rank_zero_agreed(control, [&] {
        if (failure) std::rethrow_exception(failure);
        const auto column = [&](auto member) {
          std::vector<std::remove_cvref_t<decltype(all[0].*member)>> values;
          for (const RankMetrics& r : all) values.push_back(r.*member);
          return values;
        };
        row->set("step", step).set("lr", lr)
            .set("payload_bytes", std::span<const std::int64_t>(column(&RankMetrics::payload_bytes)))
            .set("relative_error", std::span<const double>(column(&RankMetrics::relative_error)))
            .set("cosine", std::span<const double>(column(&RankMetrics::cosine)))
            .set("cumulative_relative_error", std::span<const double>(column(&RankMetrics::cumulative_relative_error)));
        output->write_step(*row);
      });
      return all;
    };

    for (std::int64_t step = 0; step < steps; ++step) {
      agree_on_failure(mpi.control(), [&] { trace->read_gradients(step, rank, grad_views); });
      // NaN/Inf: the lowest rank that holds some names the step, itself and the tensor.
      const std::string bad_tensor = nonfinite_tensor(grad_views, tensors);
      const int first_bad = control.min(bad_tensor.empty() ? w : rank);
      if (first_bad < w) {
        if (first_bad == rank) {
          std::fprintf(stderr, "lowcomm replay: step %lld: rank %d's gradient of '%s' holds NaN or Inf in %s; %s\n",
                       static_cast<long long>(step), rank, bad_tensor.c_str(), arguments.trace.c_str(),
                       skip_nonfinite ? "skipping the step (replay.nonfinite = skip)"
                                      : "stopping without an output (replay.nonfinite = stop; set it to skip "
                                        "to leave such steps out)");
          std::fflush(stderr);
        }
        if (!skip_nonfinite) agree_on_failure(control, [] { throw ReportedFailure(kNonFiniteExit); });
        ++skipped;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        write_rows(step, RankMetrics{.relative_error = nan, .cosine = nan, .cumulative_relative_error = nan},
                   StepTraffic{});
        continue;
      }
      // The clock counts the strategy's work as compute, and a modelled step's compute on top.
      network->clock.resume_compute();
      network->clock.charge_compute(network->clock.options().step_compute_s.value_or(0.0));
      update = params;  // the update: from here, through a lookahead's move (DeMo's psyche pipeline), to after the step
      strategy->before_forward(static_cast<std::uint64_t>(step), lr, param_views);
      const SyncReport report =
          strategy->step(static_cast<std::uint64_t>(step), lr, param_views, grad_inputs).sync;
      const StepTraffic traffic = recorder.settle(report);
      for (std::size_t i = 0; i < n; ++i) {
        update[i] = static_cast<float>((static_cast<double>(update[i]) - params[i]) / lr);
      }

      mean = grads;
      control.sum_each(std::span<float>(mean));
      const auto ranks = static_cast<float>(w);  // divided as compressor none divides its sum
      for (float& m : mean) m /= ranks;
      const auto [relative_error, cosine] = compare(std::span<const float>(update), std::span<const float>(mean));
      for (std::size_t i = 0; i < n; ++i) {
        total_update[i] += update[i];
        total_mean[i] += mean[i];
      }
      const double cumulative_error =
          compare(std::span<const double>(total_update), std::span<const double>(total_mean)).first;

      const RankMetrics mine{.payload_bytes = static_cast<std::int64_t>(report.payload_bytes),
                             .relative_error = relative_error,
                             .cosine = cosine,
                             .cumulative_relative_error = cumulative_error};
      const std::vector<RankMetrics> all = write_rows(step, mine, traffic);
      last_cumulative_error = 0;
      for (const RankMetrics& r : all) {
        last_cumulative_error += r.cumulative_relative_error / static_cast<double>(w);
        sum_relative_error += r.relative_error;
        sum_cosine += r.cosine;
      }
    }
    on_rank_zero_agreed(mpi.control(), [&] { output->commit(); });
    if (rank == 0) {
      const double cells = static_cast<double>(steps - skipped) * w;
      const double dense_mean =
          std::accumulate(dense_sent.begin(), dense_sent.end(), 0.0) / static_cast<double>(w);
      std::printf("lowcomm replay: %lld step%s of %d rank%s through strategy '%s', compressor "
                  "'%s' (%s); network %s\n", static_cast<long long>(steps), steps == 1 ? "" : "s", w, w == 1 ? "" : "s",
                  strategy_name.c_str(), compressor.name.c_str(), std::string(to_string(compressor.granularity)).c_str(),
                  describe_network(config).c_str());
      std::printf("  bytes sent per rank and step: %.0f (dense float32 all-reduce: %.0f%s)\n",
                  sum_sent / cells, dense_mean,
                  dense_mean > 0
                      ? fmt::format("; ratio {:.3g}", sum_sent / cells / dense_mean).c_str()
                      : "");
      std::printf("  update against a dense SGD step: relative error %.4g, cosine %.4g (mean over "
                  "steps and ranks)\n", sum_relative_error / cells, sum_cosine / cells);
      std::printf("  all updates so far against all dense steps so far, after the last step: relative error %.4g "
                  "(mean over ranks)\n", last_cumulative_error);
      if (skipped > 0) {
        std::printf("  skipped %lld step%s whose gradients held NaN or Inf (replay.nonfinite = skip)\n",
                    static_cast<long long>(skipped), skipped == 1 ? "" : "s");
      }
      std::printf("  wrote %s\n", std::filesystem::absolute(arguments.out).c_str());
    }
  });
}

}  // namespace

void add_replay_command(CLI::App& app) {
  CLI::App* replay = app.add_subcommand(
      "replay", "Replay a recorded gradient trace through a strategy and compressor, recording "
                "parameters, bytes and the error against a dense SGD step");
  static ReplayArguments arguments;  // CLI11 binds options to storage that outlives parsing
  replay->add_option("--trace", arguments.trace,
                     "HDF5 gradient trace: /params/<name>, /grads/<name> [steps, W, *shape], "
                     "attribute world_size (docs/replay.md)")
      ->required()
      ->type_name("IN.h5");
  replay->add_option("--out", arguments.out, "HDF5 file to write (docs/replay.md)")
      ->required()
      ->type_name("OUT.h5");
  replay->add_flag("--force", arguments.force, "replace --out if it exists");
  add_config_arguments(*replay, arguments.config);
  replay->footer(fmt::format("Keys: {} (optimizer.name defaults to sgd here); `lowcomm info` lists them.",
                             key_sections(replay_schema())));
  replay->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

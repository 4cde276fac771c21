// `lowcomm bench model`: training throughput of the transformer reference model (apps/gpt) on
// this node: tokens/s of a full step (forward + backward + the optimizer: AdamW, or any registered
// one at its defaults, e.g. Muon with its Newton-Schulz iterations) for a preset at a given batch
// B × T, OpenMP thread count, backend and precision, after warm-up steps, next to the rate of the
// kernel the model's projections use (linear_forward, on the same backend and in the same
// precision), measured in the same run.
//
// Model FLOPs per token, as nanoGPT's estimate_mfu (PaLM, appendix B):
//   6 · (N − T_max·C) + 12 · L · C · T
// N the parameter count (the LM head is tied to wte, so its matmul is in 6N; the position table
// is a lookup, not a matmul, hence − T_max·C), the second term the attention scores and their
// weighting at context T (counted as full, not causal, T × T). "of sgemm" = model FLOP/s as a
// fraction of the sgemm rate: how close the step comes to spending all its time in GEMMs. With
// --peak-tflops, MFU = model FLOP/s as a fraction of that peak (nanoGPT's and llm.c's figure).
// Single process, no MPI; the data are random tokens (their values do not change the speed).
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/mpi_session.hpp"
#include "gpt/model.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/linear.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm::cli {
namespace {

struct BenchModelArguments {
  std::string preset = "gpt2-124m";
  int batch = 4;
  int seq = 64;
  int threads = 0;  // 0: what OpenMP has (OMP_NUM_THREADS or the cores)
  std::string backend = std::string(kernels::to_string(ExecutionContext{}.backend));
  std::string precision = "fp32";
  double peak_tflops = 0;  // the device's datasheet peak in this precision, for MFU; 0: not printed
  std::string optimizer = "adamw";
  int steps = 5;
  int warmup = 2;
};

// The optimizer at its defaults, AdamW with GPT-2's betas and weight decay (0.9, 0.95, 0.1).
std::unique_ptr<Optimizer> make_bench_optimizer(const std::string& name, const ExecutionContext& execution,
                                                const std::vector<TensorInfo>& tensors) {
  ConfigSchema schema;
  add_optimizer_keys(schema);
  std::vector<std::string> settings{"optimizer.name=" + name};
  if (name == "adamw") settings.insert(settings.end(), {"optimizer.adamw.beta2=0.95", "optimizer.adamw.weight_decay=0.1"});
  return make_optimizer(Config::defaults(schema, settings), {.execution = execution, .tensors = tensors});
}

// GFLOP/s of the linear kernel (on Cpu: OpenBLAS sgemm where the build has it; on Cuda cuBLAS, on
// the tensor cores in bf16) on n × n × n, best of five.
double measure_linear_sgemm_gflops(const ExecutionContext& execution, std::int64_t n) {
  std::vector<float> a(static_cast<std::size_t>(n * n), 0.5f), w(a.size(), 0.25f), c(a.size());
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 6; ++i) {
    const auto start = SteadyClock::now();
    kernels::linear_forward(execution.backend, c, a, w, {}, n, n, n, execution.precision);
    if (i > 0) best = std::min(best, seconds_since(start));  // the first call warms up the pool
  }
  return 2.0 * static_cast<double>(n * n * n) / best / 1e9;
}

void run(const BenchModelArguments& args) {
  if (args.threads > 0) omp_set_num_threads(args.threads);
  place_on_launchers_device();
  const gpt::GptConfig config = gpt::gpt_preset(args.preset);
  if (args.batch <= 0 || args.seq <= 0 || args.seq > config.context_length) {
    throw std::invalid_argument(fmt::format("--batch must be > 0 and --seq in 1..{} (the context length of {})",
                                            config.context_length, args.preset));
  }
  const ExecutionContext execution{.backend = backend_named(args.backend),
                                   .precision = *kernels::precision_named(args.precision)};  // CLI checked it
  const double sgemm = measure_linear_sgemm_gflops(execution, 768);
  gpt::GptModel model(config, 1, execution);
  const std::unique_ptr<Optimizer> optimizer = make_bench_optimizer(args.optimizer, execution, model.tensors());
  const std::int64_t tokens_per_step = std::int64_t{args.batch} * args.seq;
  std::mt19937 random(1);
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(config.vocab_size - 1));
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(tokens_per_step)), targets(tokens.size());
  for (auto& t : tokens) t = pick(random);
  for (auto& t : targets) t = pick(random);

  double best = std::numeric_limits<double>::infinity(), total = 0, model_s = 0, optimizer_s = 0;
  float loss = 0;
  for (int step = 0; step < args.warmup + args.steps; ++step) {
    const auto start = SteadyClock::now();
    loss = model.forward_backward(tokens, targets, args.batch, args.seq);
    const double forward_backward = seconds_since(start);
    optimizer->step(model.parameter_spans(), model.gradient_views(), 1e-4);
    const double seconds = seconds_since(start);
    if (step < args.warmup) continue;
    best = std::min(best, seconds);
    total += seconds;
    model_s += forward_backward;
    optimizer_s += seconds - forward_backward;
  }
  const double mean = total / args.steps;
  const double flops_per_token = 6.0 * static_cast<double>(config.parameter_count() - config.context_length * config.width) +
                                 12.0 * static_cast<double>(config.layers * config.width * args.seq);
  const double tokens_per_s = static_cast<double>(tokens_per_step) / mean;
  const double model_gflops = tokens_per_s * flops_per_token / 1e9;
  std::printf("# lowcomm bench model: %s (%.1f M parameters), B=%d T=%d, %d threads, %s products, optimizer %s, "
              "%d steps after %d warm-up\n",
              args.preset.c_str(), static_cast<double>(config.parameter_count()) / 1e6, args.batch, args.seq,
              omp_get_max_threads(), args.precision.c_str(), args.optimizer.c_str(), args.steps, args.warmup);
  std::printf("# matrix products: %.*s\n", static_cast<int>(kernels::cpu_matrix_products().size()),
              kernels::cpu_matrix_products().data());
  std::printf("# gemm %.1f GFLOP/s (768^3, linear_forward on %s in %s); model FLOPs/token = 6(N - T_max*C) + "
              "12*L*C*T = %.3g\n",
              sgemm, args.backend.c_str(), args.precision.c_str(), flops_per_token);
  std::printf("%-10s %6s %6s %8s %12s %12s %10s %10s %10s %9s %8s\n", "preset", "B", "T", "threads", "tokens/s",
              "step(ms)", "best(ms)", "fwd+bwd", "optimizer", "GFLOP/s", "of_sgemm");
  std::printf("%-10s %6d %6d %8d %12.1f %12.1f %10.1f %10.1f %10.1f %9.1f %7.1f%%\n", args.preset.c_str(),
              args.batch, args.seq, omp_get_max_threads(), tokens_per_s, mean * 1e3, best * 1e3,
              model_s / args.steps * 1e3, optimizer_s / args.steps * 1e3, model_gflops, 100.0 * model_gflops / sgemm);
  if (args.peak_tflops > 0) {
    std::printf("# MFU %.1f%% (model FLOP rate / --peak-tflops %.1f)\n", 100.0 * model_gflops / (args.peak_tflops * 1e3),
                args.peak_tflops);
  }
  std::printf("# activations %.1f MiB for B=%d T=%d%s; last loss %.4f\n",
              static_cast<double>(model.activation_bytes()) / (1024.0 * 1024.0), args.batch, args.seq,
              execution.precision == kernels::Precision::Bf16 ? " (bf16 storage, docs/model.md)" : "",
              static_cast<double>(loss));
}

}  // namespace

void add_bench_model_command(CLI::App& bench) {
  CLI::App* model = bench.add_subcommand(
      "model", "training tokens/s of the transformer model (forward + backward + optimizer), vs the sgemm rate");
  static BenchModelArguments arguments;  // CLI11 binds options to storage that outlives parsing
  model->add_option("--preset", arguments.preset, "model preset: tiny, small, gpt2-124m")->capture_default_str();
  model->add_option("--batch,-B", arguments.batch, "sequences per step")->capture_default_str();
  model->add_option("--seq,-T", arguments.seq, "tokens per sequence (≤ the preset's context length)")->capture_default_str();
  model->add_option("--threads", arguments.threads, "OpenMP (and OpenBLAS) threads; 0: OMP_NUM_THREADS or all cores")
      ->capture_default_str();
  std::vector<std::string> backends;
  for (const kernels::Backend b : available_backends()) {
    if (kernels::has_model_kernels(b)) backends.emplace_back(kernels::to_string(b));
  }
  model->add_option("--backend", arguments.backend,
                    "kernels: cpu (optimised), reference (plain loops), or cuda in a CUDA build (the model's "
                    "layers and AdamW on the GPU, in managed memory)")
      ->check(CLI::IsMember(backends))
      ->capture_default_str();
  model->add_option("--precision", arguments.precision,
                    "the model's precision: fp32, or bf16 products and stored activations (train.precision)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  model->add_option("--peak-tflops", arguments.peak_tflops,
                    "the hardware's peak TFLOP/s in this precision (its datasheet's): prints the model FLOP "
                    "utilisation (MFU) against it")
      ->check(CLI::NonNegativeNumber);
  model->add_option("--optimizer", arguments.optimizer,
                    "the optimizer stepped after each backward, at its defaults (adamw with GPT-2's betas 0.9, 0.95 "
                    "and weight decay 0.1): any registered one, e.g. muon")
      ->capture_default_str();
  model->add_option("--steps", arguments.steps, "timed steps")->check(CLI::Range(1, 100000))->capture_default_str();
  model->add_option("--warmup", arguments.warmup, "untimed steps first")->check(CLI::Range(0, 100000))->capture_default_str();
  model->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

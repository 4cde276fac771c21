// `lowcomm info`: what this build is and can do, without starting MPI.
#include <fmt/format.h>
#include <hdf5.h>
#include <mpi.h>

#include <iostream>

#include "commands.hpp"
#include "common/mpi_session.hpp"
#include "lowcomm/build_info.hpp"
#include "lowcomm/comm/mpi_cuda_support.hpp"
#include "lowcomm/comm/transport.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "lowcomm/data/data_config.hpp"
#include "train/train_keys.hpp"

namespace lowcomm::cli {

namespace {

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);  // allowed before MPI_Init
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of("\n,"));
}

std::string hdf5_library() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

std::string cuda_status() {
  const BuildInfo& build = build_info();
  if (!build.cuda_enabled) return "not built (preset cuda, or -DLOWCOMM_ENABLE_CUDA=ON with nvcc 12 or newer)";
  return fmt::format("built with nvcc {}", build.cuda_version);
}

std::string nccl_status() {
  if (const std::string version = nccl_version(); !version.empty()) {
    return fmt::format("{} (comm.transport = nccl)", version);
  }
  return "not built (a CUDA build where nccl.h and libnccl are found): comm.transport = mpi only";
}

std::string format_value(const ConfigValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) return fmt::format("\"{}\"", v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else return fmt::format("{}", v);
      },
      value);
}

// "default 0.01, 1e-09..1: fraction kept ..." for one key.
std::string describe_key(const ConfigKey& key) {
  if (!key.alias_of.empty()) return fmt::format("alias of {}: {}", key.alias_of, key.description);
  std::string text = key.default_value ? "default " + format_value(*key.default_value) : "unset by default";
  if (key.min || key.max) {
    text += fmt::format(", {}..{}{}", key.min ? fmt::format("{:g}", *key.min) : "",
                        key.max_exclusive ? "<" : "", key.max ? fmt::format("{:g}", *key.max) : "");
  }
  if (!key.choices.empty()) text += fmt::format(", one of {}", fmt::join(key.choices, " | "));
  return text + ": " + key.description;
}

void print_keys(const ConfigSchema& schema, std::string_view title) {
  std::cout << "\n" << title << ":\n";
  for (const ConfigKey* key : schema.keys()) {
    std::cout << fmt::format("  {:<36} {}\n", key->path, describe_key(*key));
  }
}

void print_info() {
  place_on_launchers_device();  // so the CUDA line names the device this process would take
  const BuildInfo& build = build_info();
  std::cout << fmt::format("lowcomm {} (git {})\n", build.version, build.git_revision)
            << fmt::format("  build:     {}, {}\n", build.build_type, build.compiler)
            << fmt::format("  options:   {}\n", build.options)
            << fmt::format("  MPI:       {}\n", mpi_library())
            << fmt::format("  MPI+CUDA:  {}\n", describe(mpi_cuda_support()))
            << fmt::format("  NCCL:      {}\n", nccl_status())
            << fmt::format("  HDF5:      {}\n", hdf5_library())
            << fmt::format("  CUDA:      {}\n", cuda_status())
            << fmt::format("  Kokkos:    {}\n", build.kokkos_enabled
                                                   ? fmt::format("built with Kokkos {}", build.kokkos_version)
                                                   : std::string("not built (-DLOWCOMM_ENABLE_KOKKOS=ON)"));
  std::cout << "\nCompute backends in this build (compute.backend):";
  for (const kernels::Backend backend : available_backends()) {
    std::cout << " " << kernels::to_string(backend) << (backend == ExecutionContext{}.backend ? " (default)" : "");
  }
  std::cout << "\n"
            << fmt::format("  cpu matrix products: {}\n", kernels::cpu_matrix_products())
            << fmt::format("  cpu vector loops:    {} (chosen at run time for this CPU)\n", simd_clone_in_use());
  if (const std::string kokkos = kernels::kokkos_description(); !kokkos.empty()) {
    std::cout << fmt::format("  kokkos:              {} (the compressors', strategies' and optimizers' kernels)\n",
                             kokkos);
  }
  if (const std::string cuda = kernels::cuda_description(); !cuda.empty()) {
    const bool usable = kernels::unavailable_reason(kernels::Backend::Cuda).empty();
    std::cout << fmt::format("  cuda:                {}{}\n", cuda, usable ? " (every kernel)" : "");
  }
  std::cout << "\nNetwork scenarios (network.scenario):\n";
  for (const NetworkScenario& s : network_scenarios()) {
    std::cout << fmt::format("  {:<10} {}\n", s.name, s.description);
  }
  std::cout << "\nCompressors (compressor.name):\n";
  for (const CompressorInfo* info : CompressorRegistry::global().all()) {
    std::cout << fmt::format("  {:<10} {}\n", info->name, info->description);
  }
  std::cout << "\nStrategies (strategy.name):\n";
  for (const StrategyInfo* info : StrategyRegistry::global().all()) {
    std::cout << fmt::format("  {:<14} {}\n", info->name, info->description);
  }
  std::cout << "\nOptimizers (optimizer.name):\n";
  for (const OptimizerInfo* info : OptimizerRegistry::global().all()) {
    std::cout << fmt::format("  {:<14} {}\n", info->name, info->description);
  }
  std::cout << "\nSchedules (schedule.name): constant, cosine, wsd\n";
  ConfigSchema strategies;
  StrategyRegistry::global().add_config_keys(strategies);
  print_keys(strategies, "Strategy keys");
  ConfigSchema optimizers;
  add_optimizer_keys(optimizers);
  add_schedule_keys(optimizers);
  print_keys(optimizers, "Optimizer and schedule keys");
  ConfigSchema training;
  add_model_keys(training);
  add_loop_keys(training);
  add_data_keys(training);
  print_keys(training, "`lowcomm train` keys: model, loop and data (besides the sections above)");
  ConfigSchema compute;
  add_compute_keys(compute);
  print_keys(compute, "Compute keys (train, replay, bench compressors and strategies)");
  ConfigSchema network;
  add_network_keys(network);
  print_keys(network, "Network keys (every command that communicates)");
  ConfigSchema compressors;
  CompressorRegistry::global().add_config_keys(compressors);
  print_keys(compressors, "Compressor keys");
  ConfigSchema bench;
  add_bench_collectives_keys(bench);
  print_keys(bench, "`lowcomm bench collectives` keys (besides the network keys)");
  ConfigSchema bench_compressors;
  add_bench_compressors_keys(bench_compressors);
  print_keys(bench_compressors, "`lowcomm bench compressors` keys (besides the network, compressor and compute keys)");
  ConfigSchema bench_strategies;
  add_bench_strategies_keys(bench_strategies);
  print_keys(bench_strategies, "`lowcomm bench strategies` keys (besides the network, strategy and optimizer keys)");
  ConfigSchema replay;
  add_replay_keys(replay);
  print_keys(replay, "`lowcomm replay` keys (besides the network and compressor keys)");
}

}  // namespace

void add_info_command(CLI::App& app) {
  CLI::App* info = app.add_subcommand("info", "Show version, build options, libraries, scenarios and keys");
  info->callback(print_info);
}

}  // namespace lowcomm::cli

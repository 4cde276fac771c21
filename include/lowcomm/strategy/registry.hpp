#pragma once
// Strategies by name, like compressors (compress/registry.hpp): strategy.name chooses one,
// strategy.<name>.<parameter> tunes it. A strategy also reads the sections it builds on: the
// local optimizer (optimizer.*) and the compressor that carries its traffic (compressor.*).
// `lowcomm info` lists every registered strategy with its parameters; a plug-in adds one with a
// static RegisterStrategy object.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/compress/traffic.hpp"
#include "lowcomm/compress/unit.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/config/label_key.hpp"
#include "lowcomm/core/registry.hpp"
#include "lowcomm/strategy/strategy.hpp"

namespace lowcomm {

// Everything a strategy is made from.
struct StrategySetup {
  Communicator& comm;
  std::vector<TensorInfo> tensors;  // the model's parameters, in step() order
  const Config& config;             // the resolved run configuration (all sections)
  std::uint64_t seed = 0;           // the run's seed, identical on every rank
  ExecutionContext execution;       // where it computes (compute.*, config/compute_config.hpp)
  // What the caller does to the gradients before step(), which a strategy may have to refuse:
  // each rank's gradient clipped by its global norm (the app's train.grad_clip), so none of it
  // is final before the whole backward pass is.
  bool gradients_clipped = false;
};

// One CompressedAllReduce a strategy runs: over tensors [first, first + count) of its list,
// through `compressor`, once every `period` steps. A strategy builds its exchanges from these,
// and `lowcomm plan` prices the same ones without training (compress/traffic.hpp).
// With `pairs`, the exchange is a gossip round instead (Communicator::exchange_pairs): each rank
// swaps the tensors' fp32 values with one partner, paired as gossip_matching.hpp pairs them, and
// `compressor` is not used.
struct PlannedSync {
  std::size_t first = 0;
  std::size_t count = 0;
  std::unique_ptr<Compressor> compressor;
  Granularity granularity = Granularity::PerTensor;
  std::uint64_t bucket_bytes = 1;
  std::uint64_t period = 1;
  // Steps of compute the exchange runs behind before it is waited for: DeMo's stale and Psyche's
  // pipelines 1, streaming DiLoCo its overlap_steps; 0 for a blocking one. `lowcomm plan` hides
  // up to that much of a given compute time per step, as the simulated clock would.
  std::uint64_t overlap_steps = 0;
  std::string merge_groups = "none";  // a merged exchange's group rule (network_config.hpp)
  bool pairs = false;
  // An exchange that is not a compressor's (1-bit Adam's two phases): the strategy prices one
  // occurrence itself on W ranks. When set, compressor, granularity and pairs are not read.
  std::function<StepTraffic(int world_size, const CommunicatorOptions& options)> price = nullptr;
};

// A small configuration that walks a strategy's paths within a few steps (settings as --set takes
// them, full paths): tests/strategy/strategy_mpi_test.cpp trains every registered strategy's
// examples and resumes each bitwise.
struct StrategyExample {
  std::string label;  // names the test case: letters, digits and _
  std::vector<std::string> settings;
};

struct StrategyInfo {
  std::string name;
  std::string description;
  std::vector<ConfigKey> parameters;  // paths relative to strategy.<name>
  std::function<std::unique_ptr<Strategy>(const StrategySetup&)> create;
  // Optional: the exchanges of a run with this configuration and these tensors (throws
  // ConfigError as create would). Without it `lowcomm plan` cannot price the strategy.
  std::function<std::vector<PlannedSync>(const Config&, std::span<const TensorInfo>)> syncs;
  // Optional: the name of the compressor its exchanges go through, for headers, logs and plans,
  // when it is not compressor.name (DeMo's strategy.demo.transport).
  std::function<std::string(const Config&)> transport;
  // At least one: the configurations the tests train and resume (StrategyExample).
  std::vector<StrategyExample> examples;
  // Its keys in a method's label, after its name (method_label.hpp): "diloco H=500 F=2".
  std::vector<LabelKey> label;
  // Whether the label names optimizer.name where it is not adamw (a strategy with an Adam of its
  // own does not read it).
  bool label_names_optimizer = true;
  // Optional: the whole strategy part and compressor part of its label, where the declarative
  // one does not fit (DeMo's transport and pipeline); returns the label after "<name>/".
  std::function<std::string(const Config&, std::vector<std::string>* keys)> custom_label;
};

// add, find, all and names: core/registry.hpp.
class StrategyRegistry : public Registry<StrategyInfo> {
 public:
  StrategyRegistry() : Registry("strategy") {}

  // The process-wide registry with the built-in strategies in it.
  static StrategyRegistry& global();

  // Adds strategy.name (default data_parallel) and strategy.<name>.<parameter> for every
  // strategy. The optimizer, schedule and compressor keys are added by their own functions.
  void add_config_keys(ConfigSchema& schema) const;

  // The strategy the configuration names. Throws ConfigError for invalid parameters.
  std::unique_ptr<Strategy> create(const StrategySetup& setup) const;

  // The compressor the configured strategy's exchanges go through: its `transport`, else
  // compressor.name.
  std::string transport(const Config& config) const;
};

// Adds every key a training run's strategy may read: strategy.*, optimizer.* (default
// `default_optimizer`), compressor.* and compute.*.
void add_strategy_keys(ConfigSchema& schema, std::string_view default_optimizer = "adamw");

struct RegisterStrategy {
  explicit RegisterStrategy(StrategyInfo info);
};

void register_builtin_strategies(StrategyRegistry& registry);

}  // namespace lowcomm

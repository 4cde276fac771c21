#include "plan/method_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/compress/traffic.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/strategy/gossip_matching.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "common/run_config.hpp"

namespace lowcomm::cli {

namespace {

const StrategyInfo& priced_strategy(const Config& config, int world_size) {
  if (world_size < 2) throw ConfigError(fmt::format("--world-size {}: a plan needs at least 2 ranks", world_size));
  const std::string& strategy = config.get_string("strategy.name");
  const StrategyInfo& info = StrategyRegistry::global().find(strategy);
  if (!info.syncs) {
    throw ConfigError(fmt::format("strategy \"{}\" does not describe its exchanges (StrategyInfo::syncs), so "
                                  "`lowcomm plan` cannot price it",
                                  strategy));
  }
  return info;
}

}  // namespace

void check_method(const Config& config, std::span<const TensorInfo> tensors, int world_size) {
  const StrategyInfo& info = priced_strategy(config, world_size);
  communicator_options_from_config(config, world_size);
  execution_context_from_config(config);
  check_sections_agree(config);
  for (const PlannedSync& sync : info.syncs(config, tensors)) merge_groups_from_rule(config, sync.merge_groups, world_size);
}

MethodPlan plan_method(std::string label, const Config& config, std::span<const TensorInfo> tensors, int world_size,
                       std::uint64_t step, double compute_s) {
  const StrategyInfo& info = priced_strategy(config, world_size);
  const std::string& strategy = config.get_string("strategy.name");
  const CommunicatorOptions options = communicator_options_from_config(config, world_size);
  const ExecutionContext execution = execution_context_from_config(config);
  const auto seed = static_cast<std::uint64_t>(config.get_int("seed"));

  MethodPlan plan;
  plan.label = std::move(label);
  plan.strategy = strategy;
  plan.transport = StrategyRegistry::global().transport(config);  // DeMo's: strategy.demo.transport
  plan.network = describe_links(config);
  plan.world_size = world_size;
  plan.parameters = total_numel(tensors);
  plan.compute_s = compute_s;
  for (PlannedSync& sync : info.syncs(config, tensors)) {
    const std::span<const TensorInfo> part = tensors.subspan(sync.first, sync.count);
    // A gossip round is priced on the pairing of the first round (with per-pair links, later
    // rounds' pairs cost what their own links do).
    const StepTraffic traffic = [&] {
      if (sync.price) return sync.price(world_size, options);  // priced by its strategy (1-bit Adam)
      if (sync.pairs) {
        return price_pair_exchange(gossip_matching(world_size, seed, 0),
                                   static_cast<std::uint64_t>(total_numel(part)) * sizeof(float), options);
      }
      return price_step_traffic(probe_step_traffic(*sync.compressor, part, sync.granularity, sync.bucket_bytes,
                                                   world_size, seed, execution, step),
                                options, world_size, merge_groups_from_rule(config, sync.merge_groups, world_size));
    }();
    const double share = 1.0 / static_cast<double>(sync.period);
    plan.syncs_per_step += share;
    plan.payload_bytes += share * static_cast<double>(traffic.payload_bytes);
    plan.wire_sent_bytes += share * static_cast<double>(std::ranges::max(traffic.bytes_sent));
    plan.wire_received_bytes += share * static_cast<double>(std::ranges::max(traffic.bytes_received));
    plan.collectives += share * static_cast<double>(traffic.calls);
    plan.modelled_s += share * traffic.modelled_s;
    // Hidden behind the compute of the steps it overlaps, as far as they last (collectives that
    // would queue behind each other are taken one at a time: a lower bound on what is exposed).
    const double hidden = static_cast<double>(sync.overlap_steps) * compute_s;
    plan.exposed_s += share * std::max(0.0, traffic.modelled_s - hidden);
  }
  plan.distro_received_bytes = static_cast<double>(world_size - 1) * plan.payload_bytes;
  return plan;
}

}  // namespace lowcomm::cli

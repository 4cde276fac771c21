#pragma once
// One method's byte and time budget per training step, without training: the exchanges its
// strategy would run (StrategyInfo::syncs), each priced by compress/traffic.hpp on the
// configured network for W ranks, and averaged over the steps between syncs (DiLoCo's H).
#include <cstdint>
#include <span>
#include <string>

#include "lowcomm/config/config.hpp"
#include "lowcomm/core/tensor.hpp"

namespace lowcomm::cli {

struct MethodPlan {
  std::string label;
  std::string strategy;    // strategy.name
  std::string transport;   // the compressor that carries its traffic
  std::string network;     // describe_links
  int world_size = 0;
  std::int64_t parameters = 0;
  double syncs_per_step = 0;  // exchanges per step (1/H for DiLoCo, F/H streaming)
  // Per rank and step, averaged over the steps between syncs:
  double payload_bytes = 0;      // what the rank contributes to the collectives (DeMo's "sent per step")
  double wire_sent_bytes = 0;    // what the modelled algorithms put on its link: per exchange the most of any rank
  double wire_received_bytes = 0;
  double distro_received_bytes = 0;  // DisTrO's "received per step": (W − 1) × payload
  double collectives = 0;
  double modelled_s = 0;         // modelled communication time, collectives one after another
  // With a compute time per step: that, and the communication left exposed once each exchange that
  // overlaps compute (PlannedSync::overlap_steps) has hidden up to that many steps' compute.
  double compute_s = 0;
  double exposed_s = 0;          // of modelled_s
  double step_s() const { return compute_s + exposed_s; }
};

// Checks a method as plan_method would price it, without pricing (the strategy, its exchanges'
// compressors and the network settings): ConfigError as plan_method would throw.
void check_method(const Config& config, std::span<const TensorInfo> tensors, int world_size);

// The exchanges of step `step` (for step-dependent compressors such as PowerSGD's start_step),
// every rank present. Throws ConfigError when the strategy does not describe its exchanges or
// the settings are invalid (as `lowcomm train` would).
// `compute_s`: the compute time of a step on one rank (0: not given).
MethodPlan plan_method(std::string label, const Config& config, std::span<const TensorInfo> tensors, int world_size,
                       std::uint64_t step, double compute_s = 0);

}  // namespace lowcomm::cli

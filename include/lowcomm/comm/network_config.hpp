#pragma once
// The [network] section of run and experiment files, and its translation into Communicator
// options. Keys (all optional; `lowcomm info` lists them with their defaults):
//   network.scenario                 named network (network_scenarios.hpp)
//   network.mode                     off | simulate | throttle
//   network.latency_ms / upload_mbps / download_mbps      replace the scenario's values
//   network.rank.<r>.latency_ms / upload_mbps / download_mbps   one rank's own link
//   network.all_reduce_algorithm     ring | rabenseifner
//   network.all_gather_algorithm     ring | recursive_doubling | bruck
//   network.links                    a CSV file of per-pair links (link_file.hpp)
//   comm.transport                   mpi | nccl: what moves the data (transport.hpp)
//   cluster.rank.<r>.compute_scale   a straggler: rank r's compute counts this many times
//   cluster.step_compute_ms / compute_tflops   modelled compute on the simulated clock
//   cluster.dropout                  each rank absent from each step's exchanges with this probability
//   cluster.rank.<r>.absent_steps    scheduled outages of rank r ("10-20,50-60")
#include <string>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/participation.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm {

void add_network_keys(ConfigSchema& schema);

// Throws ConfigError (naming the key) for a per-rank link of a rank the job does not have, or a
// recursive-doubling all-gather on a world size that is no power of two. A transport this build
// lacks is refused when the Communicator starts; one the compute backend cannot use by the
// command that reads both sections (apps/lowcomm/common/run_config.hpp).
CommunicatorOptions communicator_options_from_config(const Config& config, int world_size);

// The run's clock options: cluster.rank.*.compute_scale, cluster.step_compute_ms and
// cluster.compute_tflops. Throws ConfigError naming the key for a rank the job does not have,
// both compute keys set, or modelled compute with network.mode other than simulate.
ClockOptions clock_options_from_config(const Config& config, int world_size);

// Who takes part in each step (cluster.dropout, cluster.rank.*.absent_steps), drawn from `seed`.
// Throws ConfigError naming the key for a malformed range or a rank the job does not have.
Participation participation_from_config(const Config& config, int world_size, std::uint64_t seed);

// The ranks' groups of a regional merge (compressor.merge_groups, merge_schedule.hpp), one per
// rank: "none" (empty: the butterfly over all ranks), "all" (one group), "regions" (the ranks'
// network.regions, or the scenario's), or a number n (blocks of n consecutive ranks: the nodes
// of a job placed n ranks per node in rank order). Throws ConfigError for another rule, or
// "regions" without regions.
std::vector<int> merge_groups_from_rule(const Config& config, std::string_view rule, int world_size);

// One line for logs and tables: "consumer (30 ms, 10/100 Mbps up/down), mode simulate".
std::string describe_network(const Config& config);
// The same without the mode: the links alone (`lowcomm plan` prices them whatever the mode).
std::string describe_links(const Config& config);

}  // namespace lowcomm

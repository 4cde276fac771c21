#include "lowcomm/comm/network_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/comm/link_file.hpp"
#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/comm/regions.hpp"
#include "lowcomm/config/options_schema.hpp"

namespace lowcomm {

namespace {

constexpr double kMbpsMin = 1e-6;  // bandwidths must be positive

// What a link's keys may override (network.* for every rank, network.rank.<r>.* for one): latency
// in milliseconds, bandwidths in megabits per second, each unset by default.
struct LinkOverrides {
  std::optional<double> latency_ms, upload_mbps, download_mbps;
};

// The three keys, declared once; `whose` begins each description ("every rank's", "rank *'s own").
OptionsSchema<LinkOverrides> link_schema(std::string_view whose, std::string_view why) {
  const auto described = [&](std::string_view what) { return fmt::format("{} {} {}", whose, what, why); };
  return OptionsSchema<LinkOverrides>()
      .field("latency_ms", &LinkOverrides::latency_ms, described("one-way latency in milliseconds"),
             {.min = 0.0, .max = 1e6})
      .field("upload_mbps", &LinkOverrides::upload_mbps, described("upload bandwidth in megabits per second"),
             {.min = kMbpsMin, .max = 1e12})
      .field("download_mbps", &LinkOverrides::download_mbps, described("download bandwidth in megabits per second"),
             {.min = kMbpsMin, .max = 1e12});
}

const OptionsSchema<LinkOverrides>& every_rank_link_schema() {
  static const auto schema = link_schema("every rank's", "(replaces the scenario's)");
  return schema;
}

const OptionsSchema<LinkOverrides>& one_rank_link_schema() {
  static const auto schema = link_schema("rank *'s own", "(a home link)");
  return schema;
}

// Applies whichever of section.latency_ms / upload_mbps / download_mbps the config sets.
Link with_overrides(Link link, const Config& config, const std::string& section) {
  const LinkOverrides set = every_rank_link_schema().read(config, section);
  if (set.latency_ms) link.latency_s = *set.latency_ms / 1e3;
  if (set.upload_mbps) link.upload_bytes_per_s = mbps(*set.upload_mbps);
  if (set.download_mbps) link.download_bytes_per_s = mbps(*set.download_mbps);
  return link;
}

// network.* besides the links and the per-rank keys, declared once.
struct NetworkOptions {
  std::string scenario = "1gbps";
  std::string mode = "simulate";
  std::string all_reduce_algorithm = "ring";
  std::string all_gather_algorithm = "ring";
  std::optional<std::string> regions;  // unset: the scenario's
  std::optional<std::string> links;
};

const OptionsSchema<NetworkOptions>& network_schema() {
  static const auto schema = [] {
    std::vector<std::string> names;
    std::string described;
    for (const auto& s : network_scenarios()) {
      names.emplace_back(s.name);
      described += fmt::format("{}{}: {}", described.empty() ? "" : "; ", s.name, s.description);
    }
    return OptionsSchema<NetworkOptions>()
        .field("scenario", &NetworkOptions::scenario, "the modelled network (" + described + ")", {.choices = names})
        .field("mode", &NetworkOptions::mode,
               "off: no modelled time; simulate: simulated clock = measured compute + modelled communication; "
               "throttle: every collective really takes its modelled time",
               {.choices = {"off", "simulate", "throttle"}})
        .field("all_reduce_algorithm", &NetworkOptions::all_reduce_algorithm, "all-reduce algorithm the model charges",
               {.choices = {"ring", "rabenseifner"}})
        .field("all_gather_algorithm", &NetworkOptions::all_gather_algorithm, "all-gather algorithm the model charges",
               {.choices = {"ring", "recursive_doubling", "bruck"}})
        .field("regions", &NetworkOptions::regions,
               fmt::format("ranks' cloud regions, comma-separated, rank r in the (r mod n)-th; pairs in two regions "
                           "pay half the measured round trip more ({}; the worldwide scenario's default is all six)",
                           fmt::join(region_names(), ", ")))
        .field("links", &NetworkOptions::links,
               "a CSV file of per-pair links (source,destination,latency_ms,bandwidth_mbps: the path between two "
               "ranks, one direction per line; docs/network-model.md)");
  }();
  return schema;
}

NetworkOptions network_options(const Config& config) { return network_schema().read(config, "network"); }

// comm.* and cluster.* besides the per-rank keys, declared once.
struct CommOptions {
  std::string transport = "mpi";
};

const OptionsSchema<CommOptions>& comm_schema() {
  static const auto schema = OptionsSchema<CommOptions>().field(
      "transport", &CommOptions::transport,
      "what moves the collectives' data (counted and priced the same either way): mpi, the MPI library (any memory "
      "it can read); nccl, NVIDIA's NCCL on each rank's GPU (a CUDA build with NCCL, compute.backend = cuda, one "
      "GPU per rank)",
      {.choices = {"mpi", "nccl"}});
  return schema;
}

struct ClusterOptions {
  double dropout = 0.0;
  std::optional<double> step_compute_ms;
  std::optional<double> compute_tflops;
};

const OptionsSchema<ClusterOptions>& cluster_schema() {
  static const auto schema =
      OptionsSchema<ClusterOptions>()
          .field("dropout", &ClusterOptions::dropout,
                 "each rank is absent from each step's exchanges with this probability (drawn from the seed): its "
                 "contribution is missing, the others average without it",
                 {.min = 0.0, .max = 1.0})
          .field("step_compute_ms", &ClusterOptions::step_compute_ms,
                 "modelled compute: each training step's compute counts this many milliseconds on the simulated "
                 "clock (times the rank's compute_scale) instead of the measured time, so the clock repeats "
                 "bitwise (network.mode = simulate; unset: measured)",
                 {.min = 0.0, .max = 1e9})
          .field("compute_tflops", &ClusterOptions::compute_tflops,
                 "modelled compute: each training step's compute counts its FLOPs (the model's estimate) at this "
                 "rate in TFLOP/s on the simulated clock instead of the measured time (network.mode = simulate; "
                 "unset: measured)",
                 {.min = 1e-9, .max = 1e9});
  return schema;
}

// The ranks' cloud regions: network.regions, else the scenario's.
std::string regions_of(const NetworkOptions& network) {
  return network.regions ? *network.regions : std::string(network_scenario(network.scenario).regions);
}

// The rank of a per-rank key such as "network.rank.3.upload_mbps" (prefix "network.rank."). It
// must be a rank of this job, written canonically ("3", not "03"), so that two spellings can
// never name one rank.
int rank_of(const std::string& path, std::string_view prefix, int world_size) {
  const std::string rest = path.substr(prefix.size());
  const std::string rank_text = rest.substr(0, rest.find('.'));
  int rank = -1;
  const auto [end, error] = std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
  const bool parsed = error == std::errc() && end == rank_text.data() + rank_text.size();
  if (!parsed || rank < 0 || rank >= world_size || std::to_string(rank) != rank_text) {
    throw ConfigError(fmt::format("'{}': '{}' is not a rank of this {}-rank job ({})", path, rank_text, world_size,
                                  world_size == 1 ? std::string("its one rank is 0")
                                                  : fmt::format("write one of 0 to {}", world_size - 1)));
  }
  return rank;
}

}  // namespace

void add_network_keys(ConfigSchema& schema) {
  network_schema().add_to(schema, "network");
  every_rank_link_schema().add_to(schema, "network");
  one_rank_link_schema().add_to(schema, "network.rank.*");
  // What moves the data is not part of the modelled network, but it is the Communicator's too.
  comm_schema().add_to(schema, "comm");
  // The ranks' compute speed prices a step on the simulated clock as the links do, so it comes
  // with the network's keys.
  schema.add({.path = "cluster.rank.*.compute_scale", .type = ValueType::Float, .default_value = 1.0,
              .description = "a straggler: rank *'s compute counts this many times as long as measured on the "
                             "simulated clock (network.mode = simulate)",
              .min = 1e-6});
  // Who takes part in a step's exchanges (comm/participation.hpp).
  cluster_schema().add_to(schema, "cluster");
  schema.add({.path = "cluster.rank.*.absent_steps", .type = ValueType::String,
              .description = "scheduled outages of rank *: \"first-last[,first-last...]\" (steps, 0-based, inclusive)",
              .optional = true});
}

Participation participation_from_config(const Config& config, int world_size, std::uint64_t seed) {
  // A configuration made without the network's keys (a strategy test's) has everyone, always.
  if (!config.has("cluster.dropout")) return {};
  std::vector<Outage> outages;
  for (const std::string& path : config.instances("cluster.rank.*.absent_steps")) {
    const int rank = rank_of(path, "cluster.rank.", world_size);
    const std::string& text = config.get_string(path);
    const auto step_of = [&](std::string_view digits, std::string_view range) {
      std::uint64_t step = 0;
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
      if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
        throw ConfigError(fmt::format("{} = \"{}\": \"{}\" is not a step range; write e.g. \"10-20,50-60\"", path,
                                      text, range));
      }
      return step;
    };
    std::size_t begin = 0;
    while (begin <= text.size()) {
      const std::size_t end = std::min(text.find(',', begin), text.size());
      const std::string_view range = std::string_view(text).substr(begin, end - begin);
      const std::size_t dash = range.find('-');
      const std::uint64_t first = step_of(range.substr(0, dash), range);
      const std::uint64_t last = dash == std::string_view::npos ? first : step_of(range.substr(dash + 1), range);
      if (first > last) {
        throw ConfigError(fmt::format("{} = \"{}\": the range {} ends before it starts", path, text, range));
      }
      outages.push_back({rank, first, last});
      begin = end + 1;
    }
  }
  return Participation(world_size, cluster_schema().read(config, "cluster").dropout, std::move(outages), seed);
}

std::vector<int> merge_groups_from_rule(const Config& config, std::string_view rule, int world_size) {
  const auto ranks = static_cast<std::size_t>(world_size);
  if (rule == "none") return {};
  if (rule == "all") return std::vector<int>(ranks, 0);
  if (rule == "regions") {
    const std::string regions = config.has("network.scenario") ? regions_of(network_options(config)) : "";
    if (regions.empty()) {
      throw ConfigError("compressor.merge_groups = \"regions\" groups the ranks by their regions, and none are set: "
                        "set network.regions (e.g. \"virginia,tokyo\"), or group by a number of ranks");
    }
    const std::vector<std::string> placement = parse_region_list(regions);
    std::vector<int> groups(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      const std::string& region = placement[r % placement.size()];
      groups[r] = static_cast<int>(std::ranges::find(placement, region) - placement.begin());
    }
    return groups;
  }
  int size = 0;
  const auto [end, error] = std::from_chars(rule.data(), rule.data() + rule.size(), size);
  if (rule.empty() || error != std::errc() || end != rule.data() + rule.size() || size < 1) {
    throw ConfigError(fmt::format("compressor.merge_groups = \"{}\": write none, all, regions, or a number of ranks "
                                  "per group (e.g. \"8\", the ranks of a node)",
                                  rule));
  }
  std::vector<int> groups(ranks);
  for (std::size_t r = 0; r < ranks; ++r) groups[r] = static_cast<int>(r / static_cast<std::size_t>(size));
  return groups;
}

CommunicatorOptions communicator_options_from_config(const Config& config, int world_size) {
  CommunicatorOptions options;
  const NetworkOptions network = network_options(config);
  const Link base = network_scenario(network.scenario).link;
  options.network = NetworkModel(with_overrides(base, config, "network"));
  options.mode = parse_network_mode(network.mode);
  options.all_reduce_algorithm = parse_all_reduce_algorithm(network.all_reduce_algorithm);
  options.all_gather_algorithm = parse_all_gather_algorithm(network.all_gather_algorithm);
  if (options.all_gather_algorithm == AllGatherAlgorithm::RecursiveDoubling && !is_power_of_two(world_size)) {
    throw ConfigError(fmt::format(
        "network.all_gather_algorithm = \"recursive_doubling\" needs a power-of-two number of "
        "ranks, this job has {}: use \"ring\" or \"bruck\"", world_size));
  }

  for (const ConfigKey& key : one_rank_link_schema().keys()) {
    for (const std::string& path : config.instances("network.rank.*." + key.path)) {
      const int rank = rank_of(path, "network.rank.", world_size);
      const std::string section = path.substr(0, path.size() - key.path.size() - 1);  // network.rank.<r>
      options.network.set_rank_link(rank, with_overrides(options.network.link(rank), config, section));
    }
  }
  const std::string regions = regions_of(network);
  if (!regions.empty()) place_in_regions(options.network, world_size, parse_region_list(regions));
  if (network.links) {  // after the regions: a file's pair replaces a region's
    for (const PairLinkEntry& entry : read_link_file(*network.links, world_size)) {
      options.network.set_pair_link(entry.source, entry.destination, entry.link);
    }
  }
  if (config.has("comm.transport")) {
    // Whether this build has the transport is the Communicator's to check, when one starts
    // (`lowcomm plan` prices a configuration without moving any data).
    options.transport = parse_transport(comm_schema().read(config, "comm").transport);
  }
  return options;
}

ClockOptions clock_options_from_config(const Config& config, int world_size) {
  ClockOptions options;
  const std::vector<std::string> scaled = config.instances("cluster.rank.*.compute_scale");
  if (!scaled.empty()) {
    options.compute_scales.assign(static_cast<std::size_t>(world_size), 1.0);
    for (const std::string& path : scaled) {
      options.compute_scales[static_cast<std::size_t>(rank_of(path, "cluster.rank.", world_size))] =
          config.get_double(path);
    }
  }
  if (!config.has("cluster.dropout")) return options;  // a configuration made without the cluster's keys
  const ClusterOptions cluster = cluster_schema().read(config, "cluster");
  if (cluster.step_compute_ms && cluster.compute_tflops) {
    throw ConfigError("cluster.step_compute_ms and cluster.compute_tflops both model a step's compute: set one");
  }
  if ((cluster.step_compute_ms || cluster.compute_tflops) && network_options(config).mode != "simulate") {
    throw ConfigError(fmt::format("cluster.{} models the compute on the simulated clock, which network.mode = "
                                  "\"{}\" makes the wall clock: set network.mode = \"simulate\", or leave the "
                                  "compute measured",
                                  cluster.step_compute_ms ? "step_compute_ms" : "compute_tflops",
                                  network_options(config).mode));
  }
  if (cluster.step_compute_ms) options.step_compute_s = *cluster.step_compute_ms * 1e-3;
  if (cluster.compute_tflops) options.compute_flops_per_s = *cluster.compute_tflops * 1e12;
  return options;
}

std::string describe_links(const Config& config) {
  const NetworkOptions network = network_options(config);
  const Link link = with_overrides(network_scenario(network.scenario).link, config, "network");
  const bool ideal = link.latency_s == 0 && link.upload_bytes_per_s == Link{}.upload_bytes_per_s;
  std::string text = network.scenario;
  if (!ideal) {
    text += fmt::format(" ({:g} ms, {:g}/{:g} Mbps up/down)", link.latency_s * 1e3,
                        link.upload_bytes_per_s * 8 / 1e6, link.download_bytes_per_s * 8 / 1e6);
  }
  std::size_t rank_links = 0;
  for (const ConfigKey& key : one_rank_link_schema().keys()) rank_links += config.instances("network.rank.*." + key.path).size();
  if (rank_links > 0) text += fmt::format(", {} per-rank link settings", rank_links);
  if (const std::string regions = regions_of(network); !regions.empty()) text += fmt::format(", regions {}", regions);
  if (network.links) text += fmt::format(", pair links from {}", *network.links);
  if (const auto stragglers = config.instances("cluster.rank.*.compute_scale").size(); stragglers > 0) {
    text += fmt::format(", {} rank{} with a compute scale", stragglers, stragglers == 1 ? "" : "s");
  }
  if (config.has("cluster.step_compute_ms")) {
    text += fmt::format(", modelled compute {:g} ms per step", config.get_double("cluster.step_compute_ms"));
  }
  if (config.has("cluster.compute_tflops")) {
    text += fmt::format(", modelled compute at {:g} TFLOP/s", config.get_double("cluster.compute_tflops"));
  }
  return text;
}

std::string describe_network(const Config& config) {
  return describe_links(config) + ", mode " + network_options(config).mode;
}

}  // namespace lowcomm

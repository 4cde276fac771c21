#include "lowcomm/comm/network_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

#include "lowcomm/comm/link_file.hpp"
#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/comm/regions.hpp"

namespace lowcomm {

namespace {

constexpr double kMbpsMin = 1e-6;  // bandwidths must be positive

// The per-link keys: latency in milliseconds, bandwidths in megabits per second.
struct LinkKey {
  const char* name;
  const char* what;
  double min;
  double max;
};
constexpr LinkKey kLinkKeys[] = {
    {"latency_ms", "one-way latency in milliseconds", 0.0, 1e6},
    {"upload_mbps", "upload bandwidth in megabits per second", kMbpsMin, 1e12},
    {"download_mbps", "download bandwidth in megabits per second", kMbpsMin, 1e12},
};

// Applies whichever of prefix.latency_ms / upload_mbps / download_mbps the config sets.
Link with_overrides(Link link, const Config& config, const std::string& prefix) {
  if (config.has(prefix + "latency_ms")) link.latency_s = config.get_double(prefix + "latency_ms") / 1e3;
  if (config.has(prefix + "upload_mbps")) link.upload_bytes_per_s = mbps(config.get_double(prefix + "upload_mbps"));
  if (config.has(prefix + "download_mbps")) {
    link.download_bytes_per_s = mbps(config.get_double(prefix + "download_mbps"));
  }
  return link;
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
    throw ConfigError(fmt::format("'{}': '{}' is not a rank of this {}-rank job (write one of 0 to {})", path,
                                  rank_text, world_size, world_size - 1));
  }
  return rank;
}

}  // namespace

void add_network_keys(ConfigSchema& schema) {
  std::vector<std::string> names;
  std::string described;
  for (const auto& s : network_scenarios()) {
    names.emplace_back(s.name);
    described += fmt::format("{}{}: {}", described.empty() ? "" : "; ", s.name, s.description);
  }
  schema.string("network.scenario", "1gbps", "the modelled network (" + described + ")", names);
  schema.string("network.mode", "simulate",
                "off: no modelled time; simulate: simulated clock = measured compute + modelled "
                "communication; throttle: every collective really takes its modelled time",
                {"off", "simulate", "throttle"});
  schema.string("network.all_reduce_algorithm", "ring", "all-reduce algorithm the model charges",
                {"ring", "rabenseifner"});
  schema.string("network.all_gather_algorithm", "ring", "all-gather algorithm the model charges",
                {"ring", "recursive_doubling", "bruck"});
  for (const LinkKey& key : kLinkKeys) {
    schema.add({.path = fmt::format("network.{}", key.name), .type = ValueType::Float,
                .description = fmt::format("every rank's {} (replaces the scenario's)", key.what),
                .min = key.min, .max = key.max, .optional = true});
    schema.add({.path = fmt::format("network.rank.*.{}", key.name), .type = ValueType::Float,
                .description = fmt::format("rank *'s own {} (a home link)", key.what),
                .min = key.min, .max = key.max, .optional = true});
  }
  schema.add({.path = "network.regions", .type = ValueType::String,
              .description = fmt::format("ranks' cloud regions, comma-separated, rank r in the (r mod n)-th; pairs in "
                                         "two regions pay half the measured round trip more ({}; the worldwide "
                                         "scenario's default is all six)",
                                         fmt::join(region_names(), ", ")),
              .optional = true});
  schema.add({.path = "network.links", .type = ValueType::String,
              .description = "a CSV file of per-pair links (source,destination,latency_ms,bandwidth_mbps: the path "
                             "between two ranks, one direction per line; docs/network-model.md)",
              .optional = true});
  // What moves the data is not part of the modelled network, but it is the Communicator's too.
  schema.string("comm.transport", "mpi",
                "what moves the collectives' data (counted and priced the same either way): mpi, the MPI library "
                "(any memory it can read); nccl, NVIDIA's NCCL on each rank's GPU (a CUDA build with NCCL, "
                "compute.backend = cuda, one GPU per rank)",
                {"mpi", "nccl"});
  // The ranks' compute speed prices a step on the simulated clock as the links do, so it comes
  // with the network's keys.
  schema.add({.path = "cluster.rank.*.compute_scale", .type = ValueType::Float, .default_value = 1.0,
              .description = "a straggler: rank *'s compute counts this many times as long as measured on the "
                             "simulated clock (network.mode = simulate)",
              .min = 1e-6});
  // Who takes part in a step's exchanges (comm/participation.hpp).
  schema.add({.path = "cluster.dropout", .type = ValueType::Float, .default_value = 0.0,
              .description = "each rank is absent from each step's exchanges with this probability (drawn from the "
                             "seed): its contribution is missing, the others average without it",
              .min = 0.0, .max = 1.0});
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
  return Participation(world_size, config.get_double("cluster.dropout"), std::move(outages), seed);
}

CommunicatorOptions communicator_options_from_config(const Config& config, int world_size) {
  CommunicatorOptions options;
  const Link base = network_scenario(config.get_string("network.scenario")).link;
  options.network = NetworkModel(with_overrides(base, config, "network."));
  options.mode = parse_network_mode(config.get_string("network.mode"));
  options.all_reduce_algorithm = parse_all_reduce_algorithm(config.get_string("network.all_reduce_algorithm"));
  options.all_gather_algorithm = parse_all_gather_algorithm(config.get_string("network.all_gather_algorithm"));
  if (options.all_gather_algorithm == AllGatherAlgorithm::RecursiveDoubling && !is_power_of_two(world_size)) {
    throw ConfigError(fmt::format(
        "network.all_gather_algorithm = \"recursive_doubling\" needs a power-of-two number of "
        "ranks, this job has {}: use \"ring\" or \"bruck\"", world_size));
  }

  for (const LinkKey& key : kLinkKeys) {
    for (const std::string& path : config.instances(fmt::format("network.rank.*.{}", key.name))) {
      const int rank = rank_of(path, "network.rank.", world_size);
      const std::string prefix = path.substr(0, path.size() - std::string_view(key.name).size());
      options.network.set_rank_link(rank, with_overrides(options.network.link(rank), config, prefix));
    }
  }
  const std::string regions = config.has("network.regions")
                                  ? config.get_string("network.regions")
                                  : std::string(network_scenario(config.get_string("network.scenario")).regions);
  if (!regions.empty()) place_in_regions(options.network, world_size, parse_region_list(regions));
  if (config.has("network.links")) {  // after the regions: a file's pair replaces a region's
    for (const PairLinkEntry& entry : read_link_file(config.get_string("network.links"), world_size)) {
      options.network.set_pair_link(entry.source, entry.destination, entry.link);
    }
  }
  if (config.has("comm.transport")) {
    // Whether this build has the transport is the Communicator's to check, when one starts
    // (`lowcomm plan` prices a configuration without moving any data).
    options.transport = parse_transport(config.get_string("comm.transport"));
    if (options.transport == Transport::Nccl && config.has("compute.backend") &&
        config.get_string("compute.backend") != "cuda") {
      throw ConfigError(fmt::format("comm.transport = \"nccl\" moves GPU memory, but compute.backend = \"{}\" "
                                    "computes on the host: set compute.backend = \"cuda\", or comm.transport = "
                                    "\"mpi\"", config.get_string("compute.backend")));
    }
  }
  const std::vector<std::string> scaled = config.instances("cluster.rank.*.compute_scale");
  if (!scaled.empty()) {
    options.compute_scales.assign(static_cast<std::size_t>(world_size), 1.0);
    for (const std::string& path : scaled) {
      options.compute_scales[static_cast<std::size_t>(rank_of(path, "cluster.rank.", world_size))] =
          config.get_double(path);
    }
  }
  return options;
}

std::string describe_links(const Config& config) {
  const Link link = with_overrides(network_scenario(config.get_string("network.scenario")).link,
                                   config, "network.");
  const bool ideal = link.latency_s == 0 && link.upload_bytes_per_s == Link{}.upload_bytes_per_s;
  std::string text = config.get_string("network.scenario");
  if (!ideal) {
    text += fmt::format(" ({:g} ms, {:g}/{:g} Mbps up/down)", link.latency_s * 1e3,
                        link.upload_bytes_per_s * 8 / 1e6, link.download_bytes_per_s * 8 / 1e6);
  }
  const auto rank_links = config.instances("network.rank.*.upload_mbps").size() +
                          config.instances("network.rank.*.download_mbps").size() +
                          config.instances("network.rank.*.latency_ms").size();
  if (rank_links > 0) text += fmt::format(", {} per-rank link settings", rank_links);
  const std::string regions = config.has("network.regions")
                                  ? config.get_string("network.regions")
                                  : std::string(network_scenario(config.get_string("network.scenario")).regions);
  if (!regions.empty()) text += fmt::format(", regions {}", regions);
  if (config.has("network.links")) text += fmt::format(", pair links from {}", config.get_string("network.links"));
  if (const auto stragglers = config.instances("cluster.rank.*.compute_scale").size(); stragglers > 0) {
    text += fmt::format(", {} rank{} with a compute scale", stragglers, stragglers == 1 ? "" : "s");
  }
  return text;
}

std::string describe_network(const Config& config) {
  return describe_links(config) + ", mode " + config.get_string("network.mode");
}

}  // namespace lowcomm

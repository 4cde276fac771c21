#include "lowcomm/comm/regions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

constexpr std::array<std::string_view, 6> kRegions{"virginia", "oregon", "frankfurt", "tokyo", "singapore",
                                                   "saopaulo"};

// Round-trip milliseconds, kRegions' order: US East (N. Virginia), US West (Oregon), EU
// (Frankfurt), Asia Pacific (Tokyo), Asia Pacific (Singapore), South America (São Paulo).
constexpr double kRttMs[6][6] = {
    {0.0, 87.8, 88.6, 145.3, 216.7, 119.5},
    {87.8, 0.0, 159.5, 89.1, 161.4, 182.7},
    {88.6, 159.5, 0.0, 236.5, 325.9, 194.9},
    {145.3, 89.1, 236.5, 0.0, 73.8, 256.8},
    {216.7, 161.4, 325.9, 73.8, 0.0, 328.1},
    {119.5, 182.7, 194.9, 256.8, 328.1, 0.0},
};

std::size_t region_index(std::string_view name) {
  const auto it = std::ranges::find(kRegions, name);
  if (it == kRegions.end()) {
    throw ConfigError(fmt::format("unknown region '{}' in network.regions: use any of {}", name,
                                  fmt::join(kRegions, ", ")));
  }
  return static_cast<std::size_t>(it - kRegions.begin());
}

}  // namespace

std::span<const std::string_view> region_names() { return kRegions; }

double region_rtt_ms(std::string_view a, std::string_view b) { return kRttMs[region_index(a)][region_index(b)]; }

void place_in_regions(NetworkModel& network, int world_size, std::span<const std::string> placement) {
  if (placement.empty()) throw ConfigError("network.regions is empty: name at least one region");
  for (const std::string& region : placement) region_index(region);
  const auto region_of = [&](int rank) -> const std::string& {
    return placement[static_cast<std::size_t>(rank) % placement.size()];
  };
  for (int a = 0; a < world_size; ++a) {
    for (int b = 0; b < world_size; ++b) {
      if (a == b || region_of(a) == region_of(b)) continue;
      const double own = std::max(network.link(a).latency_s, network.link(b).latency_s);
      network.set_pair_link(a, b, PairLink{.latency_s = own + region_rtt_ms(region_of(a), region_of(b)) / 2e3});
    }
  }
}

std::vector<std::string> parse_region_list(std::string_view text) {
  std::vector<std::string> regions;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view name = text.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) regions.emplace_back(name);
    start = comma + 1;
  }
  return regions;
}

}  // namespace lowcomm

#pragma once
// Ranks placed in named cloud regions (`network.regions`, docs/network-model.md): every pair of
// ranks in two different regions gets a pair link whose one-way latency is the larger of the two
// ranks' own latencies plus half the regions' measured round-trip time. Bandwidth stays the
// ranks' own links'. The round-trip times are published measurements between AWS regions, the
// average latencies of "Latency Between AWS Global Regions" (2017), as tabulated at
// https://acomputerscientistlearnsaws.blogspot.com/2017/04/aws-regions.html; the mean of the
// two directions where they differ.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/comm/network_model.hpp"

namespace lowcomm {

// virginia, oregon, frankfurt, tokyo, singapore, saopaulo.
std::span<const std::string_view> region_names();

// The measured round-trip time between two regions in milliseconds (0 within one); ConfigError
// naming the known regions for an unknown name.
double region_rtt_ms(std::string_view a, std::string_view b);

// Rank r lives in placement[r % placement.size()] (so a list shorter than the job repeats). Sets
// a pair link, both ways, for every two ranks in different regions. ConfigError for an empty
// list or an unknown region.
void place_in_regions(NetworkModel& network, int world_size, std::span<const std::string> placement);

// "virginia,tokyo" -> {"virginia", "tokyo"}, spaces trimmed.
std::vector<std::string> parse_region_list(std::string_view text);

}  // namespace lowcomm

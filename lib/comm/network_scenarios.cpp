#include "lowcomm/comm/network_scenarios.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Latencies are one-way. Datacenter figures are typical of TCP over Ethernet (10 Gbps) and of
// RDMA fabrics (100 Gbps); the consumer line is the DisTrO report's "100 Mbps down, 10 Mbps up".
// worldwide: cloud machines (1 Gbps, 0.5 ms to their region's backbone) spread over six AWS
// regions, rank r in the (r mod 6)-th of regions.hpp's list, unless network.regions says otherwise.
const std::array<NetworkScenario, 6> kScenarios{{
    {"ideal", "no latency, unlimited bandwidth (communication costs nothing)", Link{}},
    {"consumer", "home internet: 100 Mbps down, 10 Mbps up, 30 ms",
     Link{.latency_s = 30e-3, .upload_bytes_per_s = mbps(10), .download_bytes_per_s = mbps(100)}},
    {"1gbps", "1 Gbps symmetric, 10 ms (a fast wide-area link)",
     Link{.latency_s = 10e-3, .upload_bytes_per_s = mbps(1e3), .download_bytes_per_s = mbps(1e3)}},
    {"10gbps", "datacenter Ethernet: 10 Gbps symmetric, 50 us",
     Link{.latency_s = 50e-6, .upload_bytes_per_s = mbps(1e4), .download_bytes_per_s = mbps(1e4)}},
    {"100gbps", "datacenter RDMA fabric: 100 Gbps symmetric, 5 us",
     Link{.latency_s = 5e-6, .upload_bytes_per_s = mbps(1e5), .download_bytes_per_s = mbps(1e5)}},
    {"worldwide", "1 Gbps machines in six cloud regions, 74-328 ms apart (network.regions)",
     Link{.latency_s = 0.5e-3, .upload_bytes_per_s = mbps(1e3), .download_bytes_per_s = mbps(1e3)},
     "virginia,oregon,frankfurt,tokyo,singapore,saopaulo"},
}};

}  // namespace

std::span<const NetworkScenario> network_scenarios() { return kScenarios; }

const NetworkScenario& network_scenario(std::string_view name) {
  for (const auto& scenario : kScenarios) {
    if (scenario.name == name) return scenario;
  }
  std::string known;
  for (const auto& scenario : kScenarios) known += (known.empty() ? "" : ", ") + std::string(scenario.name);
  throw ConfigError(fmt::format("unknown network scenario '{}': use one of {}", name, known));
}

}  // namespace lowcomm

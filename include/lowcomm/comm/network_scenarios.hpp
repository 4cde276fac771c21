#pragma once
// Named networks, so an experiment says "consumer" instead of three numbers.
#include <span>
#include <string>
#include <string_view>

#include "lowcomm/comm/network_model.hpp"

namespace lowcomm {

struct NetworkScenario {
  std::string_view name;
  std::string_view description;
  Link link;  // every rank's link
  std::string_view regions{};  // the default network.regions ("" : none)
};

// ideal, consumer, 1gbps, 10gbps, 100gbps, worldwide.
std::span<const NetworkScenario> network_scenarios();

// Throws ConfigError naming the known scenarios when `name` is not one of them.
const NetworkScenario& network_scenario(std::string_view name);

}  // namespace lowcomm

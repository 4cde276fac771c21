#pragma once
// Local optimizers by name, from the configuration: <prefix>.name chooses one of sgd | adamw |
// signum and <prefix>.<name>.<parameter> sets its parameters (docs/optimizers.md lists them).
// The learning rate is not among them: it comes from the schedule (lr_schedule.hpp) every step.
#include <memory>
#include <string_view>

#include "lowcomm/config/config.hpp"
#include "lowcomm/optim/optimizer.hpp"

namespace lowcomm {

// Adds <prefix>.name (default `default_name`) and every optimizer's parameters with their defaults.
void add_optimizer_keys(ConfigSchema& schema, std::string_view prefix = "optimizer",
                        std::string_view default_name = "adamw");

// The optimizer the configuration names. Throws ConfigError naming the key for a value the
// optimizer rejects (a β of 1, Nesterov without momentum, ...).
std::unique_ptr<Optimizer> make_optimizer(const Config& config,
                                          std::string_view prefix = "optimizer");

}  // namespace lowcomm

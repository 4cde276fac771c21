#pragma once
// Local optimizers by name, like compressors and strategies (core/registry.hpp): <prefix>.name
// chooses one (sgd | adamw | signum built in, and any a plug-in registers) and
// <prefix>.<name>.<parameter> sets its parameters (docs/optimizers.md lists them). The learning
// rate is not among them: it comes from the schedule (lr_schedule.hpp) every step.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/config/component_parameters.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/kernels/execution_context.hpp"
#include "lowcomm/core/registry.hpp"
#include "lowcomm/core/tensor.hpp"
#include "lowcomm/optim/optimizer.hpp"

namespace lowcomm {

// An optimizer's own configuration keys (<prefix>.<name>.*); prefix() names them in errors.
using OptimizerParameters = ComponentParameters;

// What an optimizer is made for. `execution` says where the parameters live and the kernels run
// (the built-ins keep their state there; an optimizer that computes on the host may ignore it).
// `tensors` are the names and shapes of the tensors step() will receive, in that order: an
// optimizer that treats tensors by their shape or role (Muon: its 2-D weights) reads them, and
// refuses to be made without them; the strategies always pass them.
struct OptimizerSetup {
  ExecutionContext execution;
  std::vector<TensorInfo> tensors;
};

struct OptimizerInfo {
  std::string name;
  std::string description;
  std::vector<ConfigKey> parameters;  // paths relative to <prefix>.<name>, e.g. "beta1"
  // Throws ConfigError naming the key for a value the optimizer rejects.
  std::function<std::unique_ptr<Optimizer>(const OptimizerParameters&, const OptimizerSetup&)> create;
};

// add, find, all and names: core/registry.hpp.
class OptimizerRegistry : public Registry<OptimizerInfo> {
 public:
  OptimizerRegistry() : Registry("optimizer") {}

  // The process-wide registry with the built-in optimizers in it.
  static OptimizerRegistry& global();

  // Adds <prefix>.name (default `default_name`) and every optimizer's parameters.
  void add_config_keys(ConfigSchema& schema, std::string_view prefix, std::string_view default_name) const;

  // The optimizer <prefix>.name names, made for `setup`.
  std::unique_ptr<Optimizer> create(const Config& config, const OptimizerSetup& setup,
                                    std::string_view prefix) const;
};

// `static lowcomm::RegisterOptimizer registration{{.name = "mine", ...}};` in a plug-in.
struct RegisterOptimizer {
  explicit RegisterOptimizer(OptimizerInfo info);
};

// The global registry's add_config_keys and create.
void add_optimizer_keys(ConfigSchema& schema, std::string_view prefix = "optimizer",
                        std::string_view default_name = "adamw");
std::unique_ptr<Optimizer> make_optimizer(const Config& config, const OptimizerSetup& setup = {},
                                          std::string_view prefix = "optimizer");

}  // namespace lowcomm

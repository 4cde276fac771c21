#include "lowcomm/optim/registry.hpp"

#include <fmt/format.h>

#include <mutex>

#include "lowcomm/error.hpp"
#include "lowcomm/optim/adamw.hpp"
#include "lowcomm/optim/sgd.hpp"
#include "lowcomm/optim/signum.hpp"

namespace lowcomm {

namespace {

// Defaults are the options structs' own, so the two cannot drift apart. The schema checks the
// plain ranges; the options' validate() the strict bounds and the combinations.
OptimizerInfo sgd_optimizer() {
  const SgdOptions d;
  return {.name = "sgd",
          .description = "SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD)",
          .parameters = {{.path = "momentum", .type = ValueType::Float, .default_value = d.momentum,
                          .description = "SGD momentum factor", .min = 0.0},
                         {.path = "dampening", .type = ValueType::Float, .default_value = d.dampening,
                          .description = "SGD dampening of the momentum"},
                         {.path = "nesterov", .type = ValueType::Boolean, .default_value = d.nesterov,
                          .description = "SGD Nesterov momentum (needs momentum > 0 and dampening 0)"},
                         {.path = "weight_decay", .type = ValueType::Float, .default_value = d.weight_decay,
                          .description = "SGD weight decay, added to the gradient (L2)", .min = 0.0}},
          .create = [](const OptimizerParameters& p, const ExecutionContext& execution) -> std::unique_ptr<Optimizer> {
            const SgdOptions options{.momentum = p.get_double("momentum"),
                                     .dampening = p.get_double("dampening"),
                                     .nesterov = p.get_bool("nesterov"),
                                     .weight_decay = p.get_double("weight_decay")};
            options.validate(p.prefix());
            return std::make_unique<Sgd>(options, execution);
          }};
}

OptimizerInfo adamw_optimizer() {
  const AdamWOptions d;
  return {.name = "adamw",
          .description = "AdamW with decoupled weight decay (torch.optim.AdamW)",
          .parameters = {{.path = "beta1", .type = ValueType::Float, .default_value = d.beta1,
                          .description = "AdamW first-moment decay, in [0, 1)", .min = 0.0, .max = 1.0},
                         {.path = "beta2", .type = ValueType::Float, .default_value = d.beta2,
                          .description = "AdamW second-moment decay, in [0, 1)", .min = 0.0, .max = 1.0},
                         {.path = "eps", .type = ValueType::Float, .default_value = d.eps,
                          .description = "AdamW denominator term, > 0", .min = 0.0},
                         {.path = "weight_decay", .type = ValueType::Float, .default_value = d.weight_decay,
                          .description = "AdamW decoupled weight decay: p <- p*(1 - lr*wd) each step",
                          .min = 0.0}},
          .create = [](const OptimizerParameters& p, const ExecutionContext& execution) -> std::unique_ptr<Optimizer> {
            const AdamWOptions options{.beta1 = p.get_double("beta1"),
                                       .beta2 = p.get_double("beta2"),
                                       .eps = p.get_double("eps"),
                                       .weight_decay = p.get_double("weight_decay")};
            options.validate(p.prefix());
            return std::make_unique<AdamW>(options, execution);
          }};
}

OptimizerInfo signum_optimizer() {
  const SignumOptions d;
  return {.name = "signum",
          .description = "Signum: the sign of a momentum (beta 0: signSGD), decoupled weight decay",
          .parameters = {{.path = "beta", .type = ValueType::Float, .default_value = d.beta,
                          .description = "Signum momentum decay, in [0, 1); 0 is signSGD", .min = 0.0,
                          .max = 1.0},
                         {.path = "weight_decay", .type = ValueType::Float, .default_value = d.weight_decay,
                          .description = "Signum decoupled weight decay: p <- p*(1 - lr*wd) each step",
                          .min = 0.0}},
          .create = [](const OptimizerParameters& p, const ExecutionContext& execution) -> std::unique_ptr<Optimizer> {
            const SignumOptions options{.beta = p.get_double("beta"), .weight_decay = p.get_double("weight_decay")};
            options.validate(p.prefix());
            return std::make_unique<Signum>(options, execution);
          }};
}

}  // namespace

OptimizerRegistry& OptimizerRegistry::global() {
  static OptimizerRegistry registry;
  static std::once_flag builtins;
  std::call_once(builtins, [] {
    registry.add(sgd_optimizer());
    registry.add(adamw_optimizer());
    registry.add(signum_optimizer());
  });
  return registry;
}

void OptimizerRegistry::add_config_keys(ConfigSchema& schema, std::string_view prefix,
                                        std::string_view default_name) const {
  schema.string(fmt::format("{}.name", prefix), std::string(default_name),
                "local optimizer (lowcomm info lists them)", names());
  for (const OptimizerInfo* info : all()) {
    for (ConfigKey key : info->parameters) {
      key.path = fmt::format("{}.{}.{}", prefix, info->name, key.path);
      schema.add(std::move(key));
    }
  }
}

std::unique_ptr<Optimizer> OptimizerRegistry::create(const Config& config, const ExecutionContext& execution,
                                                     std::string_view prefix) const {
  const OptimizerInfo& info = find(config.get_string(fmt::format("{}.name", prefix)));
  return info.create(OptimizerParameters(config, fmt::format("{}.{}", prefix, info.name)), execution);
}

RegisterOptimizer::RegisterOptimizer(OptimizerInfo info) {
  register_statically(OptimizerRegistry::global(), std::move(info));
}

void add_optimizer_keys(ConfigSchema& schema, std::string_view prefix, std::string_view default_name) {
  OptimizerRegistry::global().add_config_keys(schema, prefix, default_name);
}

std::unique_ptr<Optimizer> make_optimizer(const Config& config, const ExecutionContext& execution,
                                          std::string_view prefix) {
  return OptimizerRegistry::global().create(config, execution, prefix);
}

}  // namespace lowcomm

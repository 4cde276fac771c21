#include "lowcomm/optim/registry.hpp"

#include <fmt/format.h>

#include <mutex>
#include <type_traits>

#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/adamw.hpp"
#include "lowcomm/optim/muon.hpp"
#include "lowcomm/optim/sgd.hpp"
#include "lowcomm/optim/signum.hpp"

namespace lowcomm {

namespace {

// Each optimizer's options declared once (config/options_schema.hpp): their keys, with the
// structs' own defaults, and how they are read. The schema checks the plain ranges; the options'
// validate() the strict bounds and the combinations.
const OptionsSchema<SgdOptions>& sgd_schema() {
  static const auto schema =
      OptionsSchema<SgdOptions>()
          .field("momentum", &SgdOptions::momentum, "SGD momentum factor", {.min = 0.0})
          .field("dampening", &SgdOptions::dampening, "SGD dampening of the momentum")
          .field("nesterov", &SgdOptions::nesterov, "SGD Nesterov momentum (needs momentum > 0 and dampening 0)")
          .field("weight_decay", &SgdOptions::weight_decay, "SGD weight decay, added to the gradient (L2)",
                 {.min = 0.0});
  return schema;
}

const OptionsSchema<AdamWOptions>& adamw_schema() {
  static const auto schema =
      OptionsSchema<AdamWOptions>()
          .field("beta1", &AdamWOptions::beta1, "AdamW first-moment decay, in [0, 1)", {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .field("beta2", &AdamWOptions::beta2, "AdamW second-moment decay, in [0, 1)", {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .field("eps", &AdamWOptions::eps, "AdamW denominator term, > 0", {.min = 0.0})
          .field("weight_decay", &AdamWOptions::weight_decay,
                 "AdamW decoupled weight decay: p <- p*(1 - lr*wd) each step", {.min = 0.0});
  return schema;
}

const OptionsSchema<SignumOptions>& signum_schema() {
  static const auto schema =
      OptionsSchema<SignumOptions>()
          .field("beta", &SignumOptions::beta, "Signum momentum decay, in [0, 1); 0 is signSGD",
                 {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .field("weight_decay", &SignumOptions::weight_decay,
                 "Signum decoupled weight decay: p <- p*(1 - lr*wd) each step", {.min = 0.0});
  return schema;
}

const OptionsSchema<MuonOptions>& muon_schema() {
  static const auto schema =
      OptionsSchema<MuonOptions>()
          .field("momentum", &MuonOptions::momentum, "Muon momentum decay, in [0, 1)", {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .field("nesterov", &MuonOptions::nesterov, "Muon Nesterov momentum (the reference's default)")
          .field("ns_steps", &MuonOptions::ns_steps, "Newton-Schulz iterations orthogonalising each update",
                 {.min = 0.0, .max = 100.0})
          .field("weight_decay", &MuonOptions::weight_decay,
                 "decoupled weight decay of the orthogonalised weights: W <- W*(1 - lr*wd)", {.min = 0.0})
          .field("adamw_lr_scale", &MuonOptions::adamw_lr_scale,
                 "the AdamW tensors' learning rate over Muon's (0.015: the reference's 3e-4 beside 0.02)",
                 {.min = 0.0})
          .field("adamw_beta1", &MuonOptions::adamw_beta1, "AdamW tensors: first-moment decay, in [0, 1)",
                 {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .field("adamw_beta2", &MuonOptions::adamw_beta2, "AdamW tensors: second-moment decay, in [0, 1)",
                 {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .field("adamw_eps", &MuonOptions::adamw_eps, "AdamW tensors: denominator term, > 0", {.min = 0.0})
          .field("adamw_weight_decay", &MuonOptions::adamw_weight_decay, "AdamW tensors: decoupled weight decay",
                 {.min = 0.0})
          .field("adamw_tensors", &MuonOptions::adamw_tensors,
                 "comma-separated name patterns (globs) of 2-D tensors that take AdamW instead: embeddings and the "
                 "head; every tensor that is not 2-D takes AdamW anyway");
  return schema;
}

// An optimizer made from its schema: read, validated, constructed on the run's backend.
template <class Made, class Options>
OptimizerInfo optimizer_info(std::string name, std::string description, const OptionsSchema<Options>& schema) {
  return {.name = std::move(name),
          .description = std::move(description),
          .parameters = schema.keys(),
          .create = [&schema](const OptimizerParameters& p, const OptimizerSetup& setup) -> std::unique_ptr<Optimizer> {
            const Options options = schema.read(p);
            options.validate(p.prefix());
            if constexpr (std::is_constructible_v<Made, Options, OptimizerSetup>) {
              return std::make_unique<Made>(options, setup);
            } else {
              return std::make_unique<Made>(options, setup.execution);
            }
          }};
}

OptimizerInfo sgd_optimizer() {
  return optimizer_info<Sgd>("sgd", "SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD)",
                             sgd_schema());
}

OptimizerInfo adamw_optimizer() {
  return optimizer_info<AdamW>("adamw", "AdamW with decoupled weight decay (torch.optim.AdamW)", adamw_schema());
}

OptimizerInfo muon_optimizer() {
  return optimizer_info<Muon>("muon",
                              "Muon: Nesterov momentum orthogonalised by Newton-Schulz for the 2-D weights, AdamW for "
                              "the rest (KellerJordan/Muon's MuonWithAuxAdam)",
                              muon_schema());
}

OptimizerInfo signum_optimizer() {
  return optimizer_info<Signum>("signum", "Signum: the sign of a momentum (beta 0: signSGD), decoupled weight decay",
                                signum_schema());
}

}  // namespace

OptimizerRegistry& OptimizerRegistry::global() {
  static OptimizerRegistry registry;
  static std::once_flag builtins;
  std::call_once(builtins, [] {
    registry.add(sgd_optimizer());
    registry.add(adamw_optimizer());
    registry.add(signum_optimizer());
    registry.add(muon_optimizer());
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

std::unique_ptr<Optimizer> OptimizerRegistry::create(const Config& config, const OptimizerSetup& setup,
                                                     std::string_view prefix) const {
  const OptimizerInfo& info = find(config.get_string(fmt::format("{}.name", prefix)));
  return info.create(OptimizerParameters(config, fmt::format("{}.{}", prefix, info.name)), setup);
}

RegisterOptimizer::RegisterOptimizer(OptimizerInfo info) {
  register_statically(OptimizerRegistry::global(), std::move(info));
}

void add_optimizer_keys(ConfigSchema& schema, std::string_view prefix, std::string_view default_name) {
  OptimizerRegistry::global().add_config_keys(schema, prefix, default_name);
}

std::unique_ptr<Optimizer> make_optimizer(const Config& config, const OptimizerSetup& setup, std::string_view prefix) {
  return OptimizerRegistry::global().create(config, setup, prefix);
}

}  // namespace lowcomm

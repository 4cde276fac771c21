#include "lowcomm/optim/registry.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"
#include "lowcomm/optim/adamw.hpp"
#include "lowcomm/optim/sgd.hpp"
#include "lowcomm/optim/signum.hpp"

namespace lowcomm {

void add_optimizer_keys(ConfigSchema& schema, std::string_view prefix, std::string_view default_name) {
  const auto key = [prefix](std::string_view name) { return fmt::format("{}.{}", prefix, name); };
  schema.string(key("name"), std::string(default_name), "local optimizer", {"sgd", "adamw", "signum"});

  // Defaults are the options structs' own, so the two cannot drift apart. The schema checks the
  // plain ranges; the options' validate() the strict bounds and the combinations.
  const SgdOptions sgd;
  schema.real(key("sgd.momentum"), sgd.momentum, "SGD momentum factor", 0.0);
  schema.real(key("sgd.dampening"), sgd.dampening, "SGD dampening of the momentum");
  schema.boolean(key("sgd.nesterov"), sgd.nesterov,
                 "SGD Nesterov momentum (needs momentum > 0 and dampening 0)");
  schema.real(key("sgd.weight_decay"), sgd.weight_decay,
              "SGD weight decay, added to the gradient (L2)", 0.0);

  const AdamWOptions adamw;
  schema.real(key("adamw.beta1"), adamw.beta1, "AdamW first-moment decay, in [0, 1)", 0.0, 1.0);
  schema.real(key("adamw.beta2"), adamw.beta2, "AdamW second-moment decay, in [0, 1)", 0.0,
              1.0);
  schema.real(key("adamw.eps"), adamw.eps, "AdamW denominator term, > 0", 0.0);
  schema.real(key("adamw.weight_decay"), adamw.weight_decay,
              "AdamW decoupled weight decay: p <- p*(1 - lr*wd) each step", 0.0);

  const SignumOptions signum;
  schema.real(key("signum.beta"), signum.beta,
              "Signum momentum decay, in [0, 1); 0 is signSGD", 0.0, 1.0);
  schema.real(key("signum.weight_decay"), signum.weight_decay,
              "Signum decoupled weight decay: p <- p*(1 - lr*wd) each step", 0.0);
}

std::unique_ptr<Optimizer> make_optimizer(const Config& config, std::string_view prefix) {
  const std::string& name = config.get_string(fmt::format("{}.name", prefix));
  const std::string base = fmt::format("{}.{}", prefix, name);
  const auto real = [&](std::string_view param) {
    return config.get_double(fmt::format("{}.{}", base, param));
  };
  if (name == "sgd") {
    const SgdOptions options{.momentum = real("momentum"),
                             .dampening = real("dampening"),
                             .nesterov = config.get_bool(base + ".nesterov"),
                             .weight_decay = real("weight_decay")};
    options.validate(base);
    return std::make_unique<Sgd>(options);
  }
  if (name == "adamw") {
    const AdamWOptions options{.beta1 = real("beta1"),
                               .beta2 = real("beta2"),
                               .eps = real("eps"),
                               .weight_decay = real("weight_decay")};
    options.validate(base);
    return std::make_unique<AdamW>(options);
  }
  if (name == "signum") {
    const SignumOptions options{.beta = real("beta"), .weight_decay = real("weight_decay")};
    options.validate(base);
    return std::make_unique<Signum>(options);
  }
  throw ConfigError(
      fmt::format("{}.name = '{}': not an optimizer (sgd, adamw, signum)", prefix, name));
}

}  // namespace lowcomm

// `lowcomm plan`: the byte and time budget of a training step, without training (docs/plan.md).
//   lowcomm plan --model olmo-1b --world-size 64 --method "demo k16: strategy.name=demo
//                compressor.dct_topk.topk=16" --method "adamw: compressor.none.value_type=bf16"
// Each method is the base configuration (--config, --set) with the method's own settings; its
// strategy's exchanges are priced for W ranks (plan/method_plan.hpp). A table goes to stdout
// (Markdown), and optionally to CSV and HDF5 (log/plan_file.hpp). No MPI: it runs anywhere, for any W.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/run_config.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "plan/method_plan.hpp"
#include "plan/model_shapes.hpp"
#include "plan/plan_output.hpp"

namespace lowcomm::cli {

namespace {

struct PlanArguments {
  ConfigArguments config;
  std::string model = "gpt2-124m";
  int world_size = 32;
  std::uint64_t step = 1'000'000;
  std::vector<std::string> methods;  // "LABEL: key=value key=value"
  double step_compute_ms = 0;        // 0: the step's compute is not given
  std::string baseline;
  std::string csv;
  std::string hdf5;
  bool list_models = false;
};

struct Method {
  std::string label;
  std::vector<std::string> settings;
};

// Run when no --method is given: dense all-reduce in fp32 and bf16, and each method at its defaults.
const std::vector<std::string> kDefaultMethods = {
    "dense: strategy.name=data_parallel compressor.name=none",
    "dense-bf16: strategy.name=data_parallel compressor.name=none compressor.none.value_type=bf16",
    "demo: strategy.name=demo",
    "topk: strategy.name=data_parallel compressor.name=topk",
    "powersgd: strategy.name=data_parallel compressor.name=powersgd",
    "diloco: strategy.name=diloco",
    "desloc: strategy.name=desloc",
    "noloco: strategy.name=noloco",
    // SparseLoCo's published settings: H = 30, no outer momentum, error feedback at 0.95.
    "sparseloco: strategy.name=diloco strategy.diloco.inner_steps=30 strategy.diloco.outer_momentum=0 "
    "strategy.diloco.outer_lr=1 compressor.name=sparseloco compressor.sparseloco.error_feedback_decay=0.95",
    // MuLoCo's compressed point (experiments/muloco.toml): DiLoCo with Muon, H = 30, its
    // pseudo-gradient through top-k (10 %) with error feedback and values on a 2-bit codebook.
    "muloco: strategy.name=diloco strategy.diloco.inner_steps=30 optimizer.name=muon compressor.name=topk "
    "compressor.topk.ratio=0.1 compressor.topk.value_type=codebook",
    // signSGD with majority vote: one sign bit per entry (Signum's momentum does not change the bytes).
    "majority-vote: strategy.name=data_parallel compressor.name=majority_vote",
    // 1-bit Adam past its freeze_step: one sign bit per entry, in two phases.
    "onebit-adam: strategy.name=onebit_adam",
    // 0/1 Adam long after its freeze: one 1-bit exchange every local_step_clipper (16) steps.
    "zero-one-adam: strategy.name=zero_one_adam",
    // Psyche's DisTrO at the Consilience run's settings: top-k 4 of each 64 x 64 block, 1-bit values
    // (its pipeline moves the exchange behind the next step's compute; the bytes are the wire's).
    "psyche-distro: strategy.name=demo strategy.demo.compression_topk=4 strategy.demo.compression_chunk=64 "
    "strategy.demo.compression_decay=0.995 strategy.demo.wire=compact_1bit strategy.demo.pipeline=psyche",
};

Method parse_method(const std::string& text) {
  const std::size_t colon = text.find(':');
  Method method;
  const auto trim = [](std::string s) {
    const std::size_t first = s.find_first_not_of(" \t");
    const std::size_t last = s.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
  };
  method.label = trim(text.substr(0, colon));
  if (method.label.empty()) {
    throw ConfigError(fmt::format("--method \"{}\": give a label first, e.g. \"demo k16: strategy.name=demo "
                                  "compressor.dct_topk.topk=16\"",
                                  text));
  }
  if (colon == std::string::npos) {
    // A label alone prices the configuration as it is; settings without a label would be taken
    // for one, and silently priced as the configuration.
    if (text.find('=') != std::string::npos) {
      throw ConfigError(fmt::format("--method \"{}\": the settings need a label before them, e.g. \"mine: {}\"",
                                    text, trim(text)));
    }
    return method;
  }
  std::string rest = text.substr(colon + 1);
  std::size_t begin = 0;
  while ((begin = rest.find_first_not_of(" \t", begin)) != std::string::npos) {
    const std::size_t end = rest.find_first_of(" \t", begin);
    std::string setting = rest.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (setting.find('=') == std::string::npos) {
      throw ConfigError(fmt::format("--method \"{}\": \"{}\" is not KEY=VALUE", text, setting));
    }
    method.settings.push_back(std::move(setting));
    if (end == std::string::npos) break;
    begin = end;
  }
  return method;
}

ConfigSchema plan_schema() {
  ConfigSchema schema;
  add_network_keys(schema);
  add_strategy_keys(schema, "adamw");
  schema.integer("seed", 0, "seed of the probe gradients and of the compressors' shared draws", 0);
  return schema;
}

struct CheckedMethod {
  std::string label;
  Config config;
};

// Every method parsed and checked before any is priced (pricing a large model takes seconds per
// method): every mistake is reported at once, one line per method.
std::vector<CheckedMethod> checked_methods(const PlanArguments& arguments, std::span<const TensorInfo> tensors) {
  const ConfigSchema schema = plan_schema();
  std::vector<CheckedMethod> methods;
  std::vector<std::string> labels, problems;
  for (const std::string& text : arguments.methods.empty() ? kDefaultMethods : arguments.methods) {
    std::string label = text;
    try {
      const Method method = parse_method(text);
      label = method.label;
      if (std::ranges::find(labels, label) != labels.end()) {
        throw ConfigError(fmt::format("two methods are labelled \"{}\"", label));
      }
      labels.push_back(label);
      std::vector<std::string> overrides = arguments.config.overrides;
      overrides.insert(overrides.end(), method.settings.begin(), method.settings.end());
      // the method's settings are read as --set overrides after the base ones
      Config config = arguments.config.file.empty() ? Config::defaults(schema, overrides)
                                                    : Config::from_file(arguments.config.file, schema, overrides);
      check_method(config, tensors, arguments.world_size);
      methods.push_back({label, std::move(config)});
    } catch (const ConfigError& e) {
      problems.push_back(label == text ? e.what() : fmt::format("method \"{}\": {}", label, e.what()));
    }
  }
  if (!problems.empty()) throw ConfigError(fmt::format("{}", fmt::join(problems, "\n")));
  return methods;
}

void run(const PlanArguments& arguments) {
  if (arguments.list_models) {
    for (const ModelPreset& preset : model_presets()) {
      std::printf("  %-12s %s\n", std::string(preset.name).c_str(), std::string(preset.description).c_str());
    }
    return;
  }
  const std::vector<TensorInfo> tensors = model_tensors(arguments.model);
  const std::vector<CheckedMethod> methods = checked_methods(arguments, tensors);
  std::vector<MethodPlan> plans;
  for (const CheckedMethod& method : methods) {
    if (method.config.get_double("cluster.dropout") > 0 ||
        !method.config.instances("cluster.rank.*.absent_steps").empty()) {
      std::fprintf(stderr, "lowcomm plan: method \"%s\": dropout is not priced; the plan has every rank present\n",
                   method.label.c_str());
    }
    try {
      // --step-compute-ms, else the method's modelled compute (cluster.step_compute_ms), if any.
      const double compute_ms = arguments.step_compute_ms > 0 || !method.config.has("cluster.step_compute_ms")
                                    ? arguments.step_compute_ms
                                    : method.config.get_double("cluster.step_compute_ms");
      plans.push_back(plan_method(method.label, method.config, tensors, arguments.world_size, arguments.step,
                                  compute_ms * 1e-3));
    } catch (const ConfigError& e) {  // what only pricing finds (a compressor refusing the probe)
      throw ConfigError(fmt::format("method \"{}\": {}", method.label, e.what()));
    }
  }
  const MethodPlan* baseline = &plans.front();
  if (!arguments.baseline.empty()) {
    baseline = nullptr;
    for (const MethodPlan& p : plans) {
      if (p.label == arguments.baseline) baseline = &p;
    }
    if (!baseline) throw ConfigError(fmt::format("--baseline {}: no method has that label", arguments.baseline));
  }
  write_markdown(plans, *baseline, arguments.model, tensors.size());
  const PlanTable table = plan_table(plans, arguments.model);
  if (!arguments.csv.empty()) write_csv(table, arguments.csv);
  if (!arguments.hdf5.empty()) write_plan_file(arguments.hdf5, table);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  CLI::App* plan = app.add_subcommand("plan", "Bytes and modelled communication time per step of each method, "
                                              "for any model and rank count, without training");
  static PlanArguments arguments;  // CLI11 binds options to storage that outlives parsing
  add_config_arguments(*plan, arguments.config);
  plan->add_option("--model", arguments.model,
                   "a preset (--list-models), a .json tensor list, a gradient trace (.h5) or a run folder")
      ->capture_default_str();
  plan->add_option("--world-size", arguments.world_size, "ranks W")->capture_default_str()->check(CLI::Range(2, 1 << 20));
  plan->add_option("--step", arguments.step,
                   "the step whose exchanges are priced (a steady-state one by default: past warm-ups such as "
                   "compressor.powersgd.start_step)")
      ->capture_default_str();
  plan->add_option("--method", arguments.methods,
                   "\"LABEL: KEY=VALUE ...\": a method, as settings over the configuration (repeatable; default: "
                   "dense, dense-bf16, demo, topk, powersgd, diloco, desloc, noloco, majority-vote, onebit-adam, "
                   "zero-one-adam at their defaults, "
                   "sparseloco, muloco and psyche-distro at their published settings)")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  plan->add_option("--step-compute-ms", arguments.step_compute_ms,
                   "one rank's compute per step in ms (e.g. `lowcomm bench model`'s step(ms) on the target "
                   "machine): adds the step's time, compute plus the communication it does not hide (Psyche's and "
                   "DeMo's stale pipelines hide a step's compute, streaming DiLoCo overlap_steps' worth); without it, "
                   "a method's cluster.step_compute_ms where it sets one")
      ->type_name("MS")
      ->check(CLI::NonNegativeNumber);
  plan->add_option("--baseline", arguments.baseline, "the method the ratios divide (default: the first)")
      ->type_name("LABEL");
  plan->add_option("--csv", arguments.csv, "also write the table, in bytes, to this CSV file")->type_name("FILE");
  plan->add_option("--hdf5", arguments.hdf5, "also write it as HDF5, which the analysis report reads")
      ->type_name("FILE");
  plan->add_flag("--list-models", arguments.list_models, "list the model presets and exit");
  plan->footer("docs/plan.md: the accountings, and the published figures reproduced.");
  plan->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

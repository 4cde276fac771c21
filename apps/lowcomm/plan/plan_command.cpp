// `lowcomm plan`: the byte and time budget of a training step, without training (docs/plan.md).
//   lowcomm plan --model olmo-1b --world-size 64 --method "demo k16: strategy.name=demo
//                compressor.dct_topk.topk=16" --method "adamw: compressor.none.value_type=bf16"
// Each method is the base configuration (--config, --set) with the method's own settings; its
// strategy's exchanges are priced for W ranks (plan/method_plan.hpp). A table goes to stdout
// (Markdown), and optionally to CSV and HDF5 (log/plan_file.hpp). No MPI: it runs anywhere, for any W.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/run_config.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/plan_file.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "plan/method_plan.hpp"
#include "plan/model_shapes.hpp"

namespace lowcomm::cli {

namespace {

struct PlanArguments {
  ConfigArguments config;
  std::string model = "gpt2-124m";
  int world_size = 32;
  std::uint64_t step = 1'000'000;
  std::vector<std::string> methods;  // "LABEL: key=value key=value"
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
  if (colon == std::string::npos) return method;
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

std::string megabytes(double bytes) { return fmt::format("{:.3f}", bytes / 1e6); }

void write_markdown(const std::vector<MethodPlan>& plans, const MethodPlan& baseline, const PlanArguments& arguments,
                    std::size_t tensors) {
  const MethodPlan& first = plans.front();
  const bool one_network =
      std::ranges::all_of(plans, [&](const MethodPlan& p) { return p.network == first.network; });
  std::printf("# lowcomm plan: %s (%lld parameters in %zu tensors), W = %d ranks%s\n\n", arguments.model.c_str(),
              static_cast<long long>(first.parameters), tensors, first.world_size,
              one_network ? fmt::format(", network {}", first.network).c_str() : "");
  std::printf("Per rank and step; MB = 10^6 bytes; a method that syncs every H steps is averaged over them.\n"
              "payload: what a rank contributes to the collectives (the DeMo paper's \"per step\"). wire: what the "
              "modelled algorithms send and receive on its link. (W-1)x payload: DisTrO's \"received per step\". "
              "Ratios: %s's over the method's. comm: modelled time, collectives one after another.\n\n",
              baseline.label.c_str());
  std::printf("| method | strategy | transport | syncs/step | payload MB | wire sent MB | wire received MB | "
              "(W-1)x payload MB | payload ratio | wire ratio | comm s/step |%s\n",
              one_network ? "" : " network |");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|%s\n", one_network ? "" : "---|");
  const auto ratio = [](double base, double value) {
    return value > 0 ? fmt::format("{:.1f}x", base / value) : std::string("-");
  };
  for (const MethodPlan& p : plans) {
    std::printf("| %s | %s | %s | %.4g | %s | %s | %s | %s | %s | %s | %.4g |%s\n", p.label.c_str(),
                p.strategy.c_str(), p.transport.c_str(), p.syncs_per_step, megabytes(p.payload_bytes).c_str(),
                megabytes(p.wire_sent_bytes).c_str(), megabytes(p.wire_received_bytes).c_str(),
                megabytes(p.distro_received_bytes).c_str(), ratio(baseline.payload_bytes, p.payload_bytes).c_str(),
                ratio(baseline.wire_received_bytes, p.wire_received_bytes).c_str(), p.modelled_s,
                one_network ? "" : fmt::format(" {} |", p.network).c_str());
  }
}

// The table in bytes and seconds, one entry per method: what --csv and --hdf5 write.
PlanTable plan_table(const std::vector<MethodPlan>& plans, const PlanArguments& arguments) {
  PlanTable table;
  table.model = arguments.model;
  table.parameters = plans.front().parameters;
  table.world_size = plans.front().world_size;
  const auto text = [&](std::string name, auto field) {
    std::vector<std::string> values;
    for (const MethodPlan& p : plans) values.push_back(p.*field);
    table.text_columns.emplace_back(std::move(name), std::move(values));
  };
  const auto number = [&](std::string name, auto field) {
    std::vector<double> values;
    for (const MethodPlan& p : plans) values.push_back(static_cast<double>(p.*field));
    table.number_columns.emplace_back(std::move(name), std::move(values));
  };
  text("method", &MethodPlan::label);
  text("strategy", &MethodPlan::strategy);
  text("transport", &MethodPlan::transport);
  text("network", &MethodPlan::network);
  number("syncs_per_step", &MethodPlan::syncs_per_step);
  number("payload_bytes", &MethodPlan::payload_bytes);
  number("wire_sent_bytes", &MethodPlan::wire_sent_bytes);
  number("wire_received_bytes", &MethodPlan::wire_received_bytes);
  number("distro_received_bytes", &MethodPlan::distro_received_bytes);
  number("collectives", &MethodPlan::collectives);
  number("comm_s", &MethodPlan::modelled_s);
  return table;
}

std::string csv_field(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void write_csv(const PlanTable& table, const std::string& path) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial);
    out << "model,parameters,world_size";
    for (const auto& [name, values] : table.text_columns) out << ',' << name;
    for (const auto& [name, values] : table.number_columns) out << ',' << name;
    out << '\n';
    const std::size_t rows = table.text_columns.front().second.size();
    for (std::size_t r = 0; r < rows; ++r) {
      out << csv_field(table.model) << ',' << table.parameters << ',' << table.world_size;
      for (const auto& [name, values] : table.text_columns) out << ',' << csv_field(values[r]);
      for (const auto& [name, values] : table.number_columns) out << ',' << fmt::format("{:.17g}", values[r]);
      out << '\n';
    }
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(partial, ignored);
      throw Error(fmt::format("cannot write {}: check that its folder exists and the disk has space", partial));
    }
  }
  std::filesystem::rename(partial, path);
}

void run(const PlanArguments& arguments) {
  if (arguments.list_models) {
    for (const ModelPreset& preset : model_presets()) {
      std::printf("  %-12s %s\n", std::string(preset.name).c_str(), std::string(preset.description).c_str());
    }
    return;
  }
  const std::vector<TensorInfo> tensors = model_tensors(arguments.model);
  const ConfigSchema schema = plan_schema();
  std::vector<MethodPlan> plans;
  for (const std::string& text : arguments.methods.empty() ? kDefaultMethods : arguments.methods) {
    const Method method = parse_method(text);
    for (const MethodPlan& p : plans) {
      if (p.label == method.label) throw ConfigError(fmt::format("two methods are labelled \"{}\"", method.label));
    }
    std::vector<std::string> overrides = arguments.config.overrides;
    overrides.insert(overrides.end(), method.settings.begin(), method.settings.end());
    try {  // the method's settings are read as --set overrides after the base ones
      const Config config = arguments.config.file.empty() ? Config::defaults(schema, overrides)
                                                          : Config::from_file(arguments.config.file, schema, overrides);
      if (config.get_double("cluster.dropout") > 0 || !config.instances("cluster.rank.*.absent_steps").empty()) {
        std::fprintf(stderr, "lowcomm plan: method \"%s\": dropout is not priced; the plan has every rank present\n",
                     method.label.c_str());
      }
      plans.push_back(plan_method(method.label, config, tensors, arguments.world_size, arguments.step));
    } catch (const ConfigError& e) {
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
  write_markdown(plans, *baseline, arguments, tensors.size());
  const PlanTable table = plan_table(plans, arguments);
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
                   "dense, dense-bf16, demo, topk, powersgd, diloco at their defaults)")
      ->type_name("SPEC")
      ->allow_extra_args(false);
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

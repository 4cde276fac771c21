#include "plan/plan_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "lowcomm/error.hpp"

namespace lowcomm::cli {

namespace {

std::string megabytes(double bytes) { return fmt::format("{:.3f}", bytes / 1e6); }

std::string csv_field(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

void write_markdown(const std::vector<MethodPlan>& plans, const MethodPlan& baseline, const std::string& model,
                    std::size_t tensors) {
  const MethodPlan& first = plans.front();
  const bool one_network =
      std::ranges::all_of(plans, [&](const MethodPlan& p) { return p.network == first.network; });
  std::printf("# lowcomm plan: %s (%lld parameters in %zu tensors), W = %d ranks%s\n\n", model.c_str(),
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
PlanTable plan_table(const std::vector<MethodPlan>& plans, const std::string& model) {
  PlanTable table;
  table.model = model;
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

}  // namespace lowcomm::cli

#include "plan/plan_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "lowcomm/error.hpp"

namespace lowcomm::cli {

namespace {

// A number as a reader takes it into a paper: 11,570 (not 1.157e+04), 3.415, 0.00420; four
// significant digits at most below 1000, none after the point from 1000 up.
std::string readable(double value) {
  const double magnitude = std::abs(value);
  if (value == 0 || !std::isfinite(value)) return fmt::format("{}", value);
  if (magnitude >= 1000) {
    std::string digits = fmt::format("{:.0f}", magnitude);
    for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
    return (value < 0 ? "-" : "") + digits;
  }
  if (magnitude >= 1e-4) {
    // four significant digits, written out in full
    const int decimals = std::max(0, 3 - static_cast<int>(std::floor(std::log10(magnitude))));
    std::string text = fmt::format("{:.{}f}", value, decimals);
    if (text.find('.') != std::string::npos) {  // 12.50 -> 12.5, 3.000 -> 3
      text.erase(text.find_last_not_of('0') + 1);
      if (text.back() == '.') text.pop_back();
    }
    return text;
  }
  return fmt::format("{:.3g}", value);
}

std::string megabytes(double bytes) { return readable(bytes / 1e6); }

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
  const bool timed = first.compute_s > 0;
  std::printf("# lowcomm plan: %s (%s parameters in %zu tensors), W = %d ranks%s\n\n", model.c_str(),
              readable(static_cast<double>(first.parameters)).c_str(), tensors, first.world_size,
              one_network ? fmt::format(", network {}", first.network).c_str() : "");
  std::printf("Per rank and step; MB = 10^6 bytes; a method that syncs every H steps is averaged over them.\n"
              "payload: what a rank contributes to the collectives (the DeMo paper's \"per step\"). wire: what the "
              "modelled algorithms send and receive on its link. (W-1)x payload: DisTrO's \"received per step\". "
              "Ratios: %s's over the method's. comm: modelled time, collectives one after another.%s\n\n",
              baseline.label.c_str(),
              timed ? fmt::format(" step: the given compute ({} s) plus the communication it does not hide (an "
                                  "exchange overlapped with later steps hides up to their compute).",
                                  readable(first.compute_s))
                          .c_str()
                    : "");
  std::printf("| method | strategy | transport | syncs/step | payload MB | wire sent MB | wire received MB | "
              "(W-1)x payload MB | payload ratio | wire ratio | comm s/step |%s%s\n",
              timed ? " exposed s/step | step s |" : "", one_network ? "" : " network |");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|%s%s\n", timed ? "---|---|" : "", one_network ? "" : "---|");
  const auto ratio = [](double base, double value) {
    return value > 0 ? readable(base / value) + "x" : std::string("-");
  };
  for (const MethodPlan& p : plans) {
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s%s\n", p.label.c_str(), p.strategy.c_str(),
                p.transport.c_str(), readable(p.syncs_per_step).c_str(), megabytes(p.payload_bytes).c_str(),
                megabytes(p.wire_sent_bytes).c_str(), megabytes(p.wire_received_bytes).c_str(),
                megabytes(p.distro_received_bytes).c_str(), ratio(baseline.payload_bytes, p.payload_bytes).c_str(),
                ratio(baseline.wire_received_bytes, p.wire_received_bytes).c_str(), readable(p.modelled_s).c_str(),
                timed ? fmt::format(" {} | {} |", readable(p.exposed_s), readable(p.step_s())).c_str() : "",
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
  number("compute_s", &MethodPlan::compute_s);
  number("exposed_s", &MethodPlan::exposed_s);
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

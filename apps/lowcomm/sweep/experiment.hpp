#pragma once
// An experiment file (experiments/*.toml, docs/experiments.md): a run configuration of
// `lowcomm train` plus a [sweep] table that names the grid around it:
//
//   [model]                      # the base run: any key of `lowcomm train`
//   preset = "tiny"
//   [sweep]
//   name = "quickstart"
//   ranks = 4                    # MPI ranks of every point (an axis with key "ranks" varies it)
//   [[sweep.method]]             # optional: named bundles of settings, the first axis
//   name = "demo"
//   set = { "strategy.name" = "demo", "schedule.lr" = 1.5e-3 }
//   [[sweep.axis]]               # further axes, in file order
//   key = "network.scenario"
//   values = ["consumer", "10gbps"]
//
// The grid is the product of the axes; point N is read in mixed radix with the last axis varying
// fastest, so indices are stable as long as the file is. Every point's configuration is
// validated against the schema when the experiment is loaded, so a mistake names the point and
// the key before any job starts.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "lowcomm/config/config.hpp"

namespace lowcomm::cli {

struct SweepAxis {
  std::string key;                        // a config key, "method" or "ranks"
  std::vector<std::string> labels;        // short text of each value, for point names
  std::vector<std::vector<std::string>> settings;  // per value: "key=value" overrides
  std::vector<int> ranks;                 // for the "ranks" axis
  std::vector<std::string> names;         // for the "method" axis: each method's name as written
};

struct SweepPoint {
  std::int64_t index = 0;
  std::string name;                       // e.g. "demo-consumer-seed1"
  int ranks = 1;
  std::vector<std::string> settings;      // overrides applied to the base configuration
  std::string method;                     // its [[sweep.method]] name ("" without a method axis)
};

class Experiment {
 public:
  // Throws ConfigError naming the file, the point and the key for any mistake.
  static Experiment load(const std::filesystem::path& file, const ConfigSchema& schema,
                         std::vector<std::string> extra_overrides = {});

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::vector<SweepAxis>& axes() const { return axes_; }
  std::int64_t size() const;
  SweepPoint point(std::int64_t index) const;  // throws ConfigError when out of range
  Config config(const SweepPoint& point) const;

 private:
  std::filesystem::path file_;
  std::string name_, description_;
  std::string base_text_;                  // the file without its [sweep] table
  std::vector<std::string> extra_overrides_;  // --set, applied after the point's settings
  const ConfigSchema* schema_ = nullptr;
  int ranks_ = 1;
  std::vector<SweepAxis> axes_;
};

}  // namespace lowcomm::cli

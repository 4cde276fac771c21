// `lowcomm sweep FILE`: the grid of an experiment file (sweep/experiment.hpp, docs/experiments.md).
//   lowcomm sweep FILE                      lists every point: index, name, ranks, settings
//   lowcomm sweep FILE --count              the number of points (a Slurm array is 0..count-1)
//   lowcomm sweep FILE --index N            point N's full resolved configuration, as TOML
//   lowcomm sweep FILE --index N --field F  only its name or ranks (for job scripts)
// --set overrides apply to every point after its own settings (e.g. shorter runs for a test).
// No MPI: it runs on a login node, and job scripts call it before launching the ranks.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "experiment.hpp"
#include "train/train_keys.hpp"

namespace lowcomm::cli {

namespace {

struct SweepArguments {
  std::string file;
  bool count = false;
  std::optional<std::int64_t> index;
  std::string field;
  std::vector<std::string> overrides;
};

void run(const SweepArguments& arguments) {
  const ConfigSchema schema = train_schema();
  const Experiment experiment = Experiment::load(arguments.file, schema, arguments.overrides);
  if (arguments.count) {
    std::printf("%lld\n", static_cast<long long>(experiment.size()));
    return;
  }
  if (arguments.index) {
    const SweepPoint point = experiment.point(*arguments.index);
    if (arguments.field == "name") {
      std::printf("%s\n", point.name.c_str());
    } else if (arguments.field == "ranks") {
      std::printf("%d\n", point.ranks);
    } else {
      std::printf("# experiment %s, grid point %lld of %lld: %s\n# ranks = %d\n%s", experiment.name().c_str(),
                  static_cast<long long>(point.index), static_cast<long long>(experiment.size()),
                  point.name.c_str(), point.ranks, experiment.config(point).to_toml().c_str());
    }
    return;
  }
  std::printf("# experiment %s: %lld point%s%s%s\n", experiment.name().c_str(),
              static_cast<long long>(experiment.size()), experiment.size() == 1 ? "" : "s",
              experiment.description().empty() ? "" : " - ", experiment.description().c_str());
  std::vector<std::string> axes;
  for (const SweepAxis& axis : experiment.axes()) axes.push_back(fmt::format("{} ({})", axis.key, axis.labels.size()));
  std::printf("# axes, slowest first: %s\n", axes.empty() ? "none" : fmt::format("{}", fmt::join(axes, " x ")).c_str());
  std::printf("# %5s  %-36s %5s  %s\n", "index", "name", "ranks", "settings");
  for (std::int64_t i = 0; i < experiment.size(); ++i) {
    const SweepPoint point = experiment.point(i);
    std::printf("  %5lld  %-36s %5d  %s\n", static_cast<long long>(i), point.name.c_str(), point.ranks,
                fmt::format("{}", fmt::join(point.settings, " ")).c_str());
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  CLI::App* sweep = app.add_subcommand("sweep", "List an experiment's grid points, or resolve one to its config");
  static SweepArguments arguments;  // CLI11 binds options to storage that outlives parsing
  sweep->add_option("file", arguments.file, "experiment file (experiments/*.toml)")->required()->type_name("FILE.toml");
  CLI::Option* count = sweep->add_flag("--count", arguments.count, "print the number of grid points");
  CLI::Option* index = sweep->add_option("--index", arguments.index, "print grid point N's full configuration")
                           ->type_name("N")
                           ->excludes(count);
  sweep->add_option("--field", arguments.field, "with --index: print only the point's name or ranks")
      ->check(CLI::IsMember({"name", "ranks"}))
      ->needs(index);
  sweep->add_option("--set", arguments.overrides, "override a key in every point (repeatable)")
      ->type_name("KEY=VALUE");
  sweep->footer("docs/experiments.md describes experiment files; `lowcomm train --config` runs a point.");
  sweep->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

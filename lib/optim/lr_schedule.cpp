#include "lowcomm/optim/lr_schedule.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <optional>
#include <string>

#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

LrSchedule::LrSchedule(LrScheduleOptions options) : options_(options) {
  const LrScheduleOptions& o = options_;
  if (!(o.lr >= 0.0) || !std::isfinite(o.lr))
    throw ConfigError(fmt::format("schedule.lr = {}: must be finite and >= 0", o.lr));
  if (o.warmup_steps < 0)
    throw ConfigError(fmt::format("schedule.warmup_steps = {}: must be >= 0", o.warmup_steps));
  if (!(o.min_lr_ratio >= 0.0 && o.min_lr_ratio <= 1.0))
    throw ConfigError(
        fmt::format("schedule.min_lr_ratio = {}: must be in [0, 1]", o.min_lr_ratio));
  if (o.kind == LrScheduleKind::Cosine && o.total_steps <= o.warmup_steps)
    throw ConfigError(fmt::format(
        "schedule.total_steps = {}: the cosine schedule needs more than warmup_steps ({})",
        o.total_steps, o.warmup_steps));
  if (o.kind == LrScheduleKind::Wsd) {
    if (o.decay_steps < 1)
      throw ConfigError(fmt::format("schedule.decay_steps = {}: wsd needs >= 1", o.decay_steps));
    if (o.total_steps < o.warmup_steps + o.decay_steps)
      throw ConfigError(fmt::format(
          "schedule.total_steps = {}: wsd needs >= warmup_steps + decay_steps ({} + {})",
          o.total_steps, o.warmup_steps, o.decay_steps));
  }
}

double LrSchedule::factor(std::uint64_t step) const {
  const LrScheduleOptions& o = options_;
  const double s = static_cast<double>(step);
  const auto w = static_cast<std::uint64_t>(o.warmup_steps);
  if (step < w) return (s + 1.0) / static_cast<double>(o.warmup_steps);
  const double m = o.min_lr_ratio;
  const auto total = static_cast<std::uint64_t>(o.total_steps);
  switch (o.kind) {
    case LrScheduleKind::Constant:
      return 1.0;
    case LrScheduleKind::Cosine: {
      if (step >= total) return m;
      const double progress = (s - static_cast<double>(o.warmup_steps)) /
                              static_cast<double>(o.total_steps - o.warmup_steps);
      return m + (1.0 - m) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
    }
    case LrScheduleKind::Wsd: {
      if (step >= total) return m;
      const std::int64_t decay_start = o.total_steps - o.decay_steps;
      if (step < static_cast<std::uint64_t>(decay_start)) return 1.0;
      return 1.0 - (1.0 - m) * (s - static_cast<double>(decay_start) + 1.0) /
                       static_cast<double>(o.decay_steps);
    }
  }
  return 1.0;
}

double LrSchedule::at(std::uint64_t step) const { return options_.lr * factor(step); }

namespace {

// schedule.* as the configuration has it (the kind by name, the run-length keys unset until
// given), declared once; from_config turns it into LrScheduleOptions.
struct ScheduleKeys {
  std::string name = "constant";
  double lr = LrScheduleOptions{}.lr;
  std::int64_t warmup_steps = LrScheduleOptions{}.warmup_steps;
  std::optional<std::int64_t> total_steps;
  double min_lr_ratio = LrScheduleOptions{}.min_lr_ratio;
  std::optional<std::int64_t> decay_steps;
};

const OptionsSchema<ScheduleKeys>& schedule_schema() {
  static const auto schema =
      OptionsSchema<ScheduleKeys>()
          .field("name", &ScheduleKeys::name, "learning-rate schedule (docs/optimizers.md)",
                 {.choices = {"constant", "cosine", "wsd"}})
          .field("lr", &ScheduleKeys::lr, "peak learning rate", {.min = 0.0})
          .field("warmup_steps", &ScheduleKeys::warmup_steps,
                 "linear warm-up steps: lr*(s+1)/warmup_steps for step s < warmup_steps", {.min = 0.0})
          .field("total_steps", &ScheduleKeys::total_steps, "steps of the whole run; required by cosine and wsd",
                 {.min = 1.0})
          .field("min_lr_ratio", &ScheduleKeys::min_lr_ratio, "floor of cosine and wsd as a fraction of the peak",
                 {.min = 0.0, .max = 1.0})
          .field("decay_steps", &ScheduleKeys::decay_steps, "wsd: steps of the final linear decay; required by wsd",
                 {.min = 1.0});
  return schema;
}

}  // namespace

LrSchedule LrSchedule::from_config(const Config& config, std::string_view prefix) {
  const auto key = [prefix](std::string_view name) { return fmt::format("{}.{}", prefix, name); };
  const ScheduleKeys keys = schedule_schema().read(config, std::string(prefix));
  LrScheduleOptions o;
  if (keys.name == "constant") {
    o.kind = LrScheduleKind::Constant;
  } else if (keys.name == "cosine") {
    o.kind = LrScheduleKind::Cosine;
  } else if (keys.name == "wsd") {
    o.kind = LrScheduleKind::Wsd;
  } else {
    throw ConfigError(fmt::format("{} = '{}': not a schedule (constant, cosine, wsd)", key("name"), keys.name));
  }
  o.lr = keys.lr;
  o.warmup_steps = keys.warmup_steps;
  o.min_lr_ratio = keys.min_lr_ratio;
  if (keys.total_steps) {
    o.total_steps = *keys.total_steps;
  } else if (o.kind != LrScheduleKind::Constant) {
    throw ConfigError(fmt::format("{}: required by {} = {}", key("total_steps"), key("name"), keys.name));
  }
  if (keys.decay_steps) {
    o.decay_steps = *keys.decay_steps;
  } else if (o.kind == LrScheduleKind::Wsd) {
    throw ConfigError(fmt::format("{}: required by {} = wsd", key("decay_steps"), key("name")));
  }
  return LrSchedule(o);
}

void add_schedule_keys(ConfigSchema& schema, std::string_view prefix) { schedule_schema().add_to(schema, prefix); }

}  // namespace lowcomm

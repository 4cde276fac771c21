#pragma once
// Learning-rate schedules. Steps are counted from 0: at(s) is the learning rate of the s-th
// optimizer step (the first step uses at(0)), like torch.optim.lr_scheduler.LambdaLR, whose lambda
// is called with 0 for the first step. With lr the peak, W warmup_steps, T total_steps,
// D decay_steps and m the min_lr_ratio, at(s) = lr·f(s) where
//   warm-up (every schedule), s < W:   f = (s + 1) / W
//   constant, s ≥ W:                   f = 1
//   cosine,   W ≤ s < T:               f = m + (1 − m)·0.5·(1 + cos(π·(s − W) / (T − W)))
//             s ≥ T:                   f = m
//   wsd,      W ≤ s < T − D:           f = 1
//             T − D ≤ s < T:           f = 1 − (1 − m)·(s − (T − D) + 1) / D
//             s ≥ T:                   f = m
// So cosine's first step after warm-up is at the peak and its curve reaches m at s = T; wsd's
// D decay steps are each lower than the one before, the last (s = T − 1) at m. All in double,
// in exactly the order written (the fixture's Python lambda is the same expression).
#include <cstdint>
#include <string>
#include <string_view>

#include "lowcomm/config/config.hpp"

namespace lowcomm {

enum class LrScheduleKind { Constant, Cosine, Wsd };

struct LrScheduleOptions {
  LrScheduleKind kind = LrScheduleKind::Constant;
  double lr = 1e-3;               // the peak, ≥ 0
  std::int64_t warmup_steps = 0;  // W ≥ 0
  std::int64_t total_steps = 0;   // T: cosine needs T > W, wsd T ≥ W + D
  double min_lr_ratio = 0.1;      // m in [0, 1] (DeMo's paper decays to 10% of the peak)
  std::int64_t decay_steps = 0;   // D: wsd needs D ≥ 1
};

class LrSchedule {
 public:
  // Throws ConfigError naming the "schedule.<key>" that is out of range or inconsistent.
  explicit LrSchedule(LrScheduleOptions options = {});
  // Reads the keys add_schedule_keys() added under `prefix`.
  static LrSchedule from_config(const Config& config, std::string_view prefix = "schedule");

  double at(std::uint64_t step) const;
  // f(step) above: at(step) = peak()·factor(step).
  double factor(std::uint64_t step) const;
  double peak() const { return options_.lr; }
  const LrScheduleOptions& options() const { return options_; }

 private:
  LrScheduleOptions options_;
};

// Adds <prefix>.name (constant | cosine | wsd, default constant), .lr (1e-3), .warmup_steps (0),
// .total_steps (required by cosine and wsd), .min_lr_ratio (0.1), .decay_steps (required by wsd).
void add_schedule_keys(ConfigSchema& schema, std::string_view prefix = "schedule");

}  // namespace lowcomm

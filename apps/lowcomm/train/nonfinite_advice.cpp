#include "nonfinite_advice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

namespace lowcomm::cli {

std::string nonfinite_tensor(const gpt::GptModel& model) {
  const std::span<const std::span<float>> grads = model.gradient_spans();
  for (std::size_t t = 0; t < grads.size(); ++t) {
    if (!std::ranges::all_of(grads[t], [](float g) { return std::isfinite(g); })) return model.tensors()[t].name;
  }
  return "";
}

std::string advice_after_nonfinite(std::int64_t step, const std::map<std::int64_t, double>& loss_of_step,
                                   const std::vector<std::int64_t>& kept_steps, std::int64_t keep_checkpoints,
                                   std::int64_t checkpoint_every) {
  double lowest = std::numeric_limits<double>::infinity();
  for (const auto& [s, loss] : loss_of_step) {
    if (std::isfinite(loss)) lowest = std::min(lowest, loss);
  }
  const auto loss_of = [&](std::int64_t kept) -> std::optional<double> {
    const auto logged = loss_of_step.find(kept);
    return logged == loss_of_step.end() ? std::nullopt : std::optional(logged->second);
  };
  std::vector<std::int64_t> older;
  std::optional<std::int64_t> back, least;
  for (const std::int64_t kept : kept_steps) {
    if (kept >= step) continue;
    older.push_back(kept);
    const std::optional<double> loss = loss_of(kept);
    // A step logged before this process started has no known loss and counts as good.
    if (!loss || (std::isfinite(*loss) && *loss <= 2 * lowest)) back = kept;
    if (loss && std::isfinite(*loss) && (!least || *loss < *loss_of(*least))) least = kept;
  }
  const auto with_loss = [&](std::int64_t kept) {
    const std::optional<double> loss = loss_of(kept);
    return loss ? fmt::format(" (loss {:.4f})", *loss) : std::string();
  };
  if (back) {
    return fmt::format("lowcomm: the checkpoint of step {} holds the parameters that gave NaN/Inf. The newest good "
                       "one is step {}{}: go back to it with a lower schedule.lr or a train.grad_clip, "
                       "--resume-from {}",
                       step, *back, with_loss(*back), *back);
  }
  if (!older.empty()) {
    return fmt::format("lowcomm: the {} checkpoint{} kept before step {} (steps {} to {}) all hold parameters whose "
                       "loss was already diverging (above twice the lowest, {:.4f}, or not finite){}: start over "
                       "with --force and a lower schedule.lr or a train.grad_clip{}",
                       older.size(), older.size() == 1 ? "" : "s", step, older.front(), older.back(), lowest,
                       least ? fmt::format("; the least bad is step {}{}", *least, with_loss(*least)) : "",
                       least ? fmt::format(", or --resume-from {} with them", *least) : "");
  }
  return fmt::format("lowcomm: no checkpoint before step {} is kept (train.keep_checkpoints = {}, "
                     "train.checkpoint_every = {}): lower schedule.lr or set train.grad_clip and start over with "
                     "--force, or --resume to retry from step {}",
                     step, keep_checkpoints, checkpoint_every, step);
}

}  // namespace lowcomm::cli

// What the trainer writes besides checkpoints: the HDF5 run log (created, or appended to on a
// resume), the header it prints, one row per step gathered from every rank, validation, the
// gradient trace (--record-trace) and the timeline (--timeline).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/strategy/method_label.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "trainer.hpp"

namespace lowcomm::cli {

void Trainer::open_log() {
  on_rank_zero_agreed(control(), [&] {
    const LogSchema schema = training_log_schema(mpi_.size());
    if (arguments_.resume && std::filesystem::exists(log_path())) {
      log_.emplace(RunLog::append(log_path(), schema, {}, first_step_, config_.to_toml()));
      require_every_row_before(first_step_);
      return;
    }
    if (resumed_) {
      throw LogError(fmt::format("{} has a checkpoint of step {} but no log.h5: the log of its first {} steps "
                                 "is lost. Start over with --force, or keep the checkpoint and --out elsewhere",
                                 run_dir_.string(), first_step_, first_step_));
    }
    RunMetadata metadata = RunMetadata::for_this_process(config_.to_toml(), mpi_.size(), {},
                                                         static_cast<std::uint64_t>(config_.get_int("seed")));
    metadata.hosts = hosts_;
    metadata.extra = {{"strategy", config_.get_string("strategy.name")},
                      {"compressor", StrategyRegistry::global().transport(config_)},
                      {"optimizer", config_.get_string("optimizer.name")},
                      {"model", fmt::format("{} ({} parameters)", config_.get_string("model.preset"),
                                            model_->parameter_count())},
                      {"data", data_->description},
                      {"network", describe_network(config_)}};
    if (const std::string& method = config_.get_string("experiment.method"); !method.empty()) {
      metadata.extra["method"] = method;
    }
    // The method's label and the keys it was made from: analysis/ reads them (method_label.hpp).
    const MethodLabel label = method_label(config_);
    metadata.extra["label"] = label.text;
    metadata.extra["label_keys"] = fmt::format("{}", fmt::join(label.keys, ","));
    if (data_->val_loss_floor) metadata.extra["val_loss_floor"] = fmt::format("{:.17g}", *data_->val_loss_floor);
    if (data_->loss_floor) metadata.extra["loss_floor"] = fmt::format("{:.17g}", *data_->loss_floor);
    log_.emplace(RunLog::create(log_path(), schema, metadata, {}, arguments_.force));
  });
}

// A resumed log must hold one row for each step before the checkpoint's: otherwise rows were
// lost (a log from an older lowcomm, whose checkpoint could overtake the log's last flush), and
// appending would leave a gap that the analysis would silently read across.
void Trainer::require_every_row_before(std::int64_t step) const {
  const std::int64_t rows = log_->rows("steps");
  if (rows == step) return;
  throw LogError(fmt::format("{} holds {} step rows but the checkpoint resumes at step {}: the rows of {} steps "
                             "are missing, so the resumed log would have a gap. Start over with --force, or "
                             "resume a copy of the run folder after checking its log",
                             log_path().string(), rows, step, step - rows));
}

void Trainer::open_trace() {
  if (arguments_.record_trace.empty()) return;
  on_rank_zero_agreed(control(), [&] {
    const std::span<const std::span<float>> params = model_->parameter_spans();
    const std::vector<std::span<const float>> initial(params.begin(), params.end());
    trace_.emplace(arguments_.record_trace, mpi_.size(), model_->tensors(), initial);
  });
}

void Trainer::print_header() const {
  std::printf("lowcomm train: %d rank%s, model %s (%lld parameters), strategy %s, compressor %s, optimizer %s\n",
              mpi_.size(), mpi_.size() == 1 ? "" : "s", config_.get_string("model.preset").c_str(),
              static_cast<long long>(model_->parameter_count()), config_.get_string("strategy.name").c_str(),
              StrategyRegistry::global().transport(config_).c_str(), config_.get_string("optimizer.name").c_str());
  std::printf("  data: %s\n  network: %s\n  out: %s%s\n", data_->description.c_str(),
              describe_network(config_).c_str(), run_dir_.c_str(),
              resumed_ ? fmt::format(" (resumed at step {})", first_step_).c_str() : "");
  if (data_->loss_floor) std::printf("  best achievable loss (entropy rate of the source): %.4f nats/token\n", *data_->loss_floor);
  std::fflush(stdout);
}

// Gathers every rank's numbers to rank 0, which writes the row; returns the mean loss there.
double Trainer::log_step(std::int64_t step, double lr, const RankStep& mine, const StepTraffic& traffic,
                         double rank_tokens) {
  std::optional<RowValues> row;
  if (mpi_.rank() == 0) row.emplace(log_->row("steps"));
  const std::vector<RankShare<RankStep>> all =
      recorder_->record(traffic, mine, row ? &*row : nullptr);
  double mean_loss = 0;
  on_rank_zero_agreed(control(), [&] {
    double norm = 0, compute = 0;
    for (const RankShare<RankStep>& share : all) {
      const RankStep& r = share.own;
      mean_loss += r.loss / static_cast<double>(all.size());
      norm += r.grad_norm / static_cast<double>(all.size());
      compute = std::max(compute, r.compute_s);
    }
    row->set("step", step).set("loss", mean_loss).set("lr", lr)
        .set("tokens", static_cast<std::int64_t>(rank_tokens) * mpi_.size())
        .set("compute_s", compute).set("grad_norm", norm);
    log_->write_row(*row);
  });
  return mean_loss;
}

void Trainer::evaluate(std::int64_t step, ProgressLine& progress) {
  // data.val_windows = 0: no validation set, so no evaluation row and no line (a loss of 0
  // would read as a perfect model). Every rank holds as many windows.
  if (data_->loader.val_batch_count() == 0) return;
  double sum = 0, rows = 0;
  for (std::int64_t i = 0; i < data_->loader.val_batch_count(); ++i) {
    const Batch batch = data_->loader.val_batch(i);
    const float loss = model_->loss(batch.tokens, batch.targets, static_cast<int>(batch.rows),
                                    static_cast<int>(batch.seq_len));
    sum += static_cast<double>(loss) * static_cast<double>(batch.rows);
    rows += static_cast<double>(batch.rows);
  }
  const double mine = sum / rows;
  const double val_loss = control().sum(mine) / mpi_.size();
  on_rank_zero_agreed(control(), [&] {
    RowValues row = log_->row("eval");
    row.set("step", step).set("val_loss", val_loss);
    log_->write_row(row);
    log_->flush();
    progress.print_message(fmt::format("  validation loss after step {}: {:.4f}{}", step, val_loss,
                                       data_->val_loss_floor ? fmt::format(" (floor {:.4f})", *data_->val_loss_floor)
                                                             : std::string())
                               .c_str());
  });
}

void Trainer::record_trace() {
  if (arguments_.record_trace.empty()) return;
  const std::int64_t row = mpi_.rank() == 0 ? trace_->add_step() : 0;
  control().stream_to_root(model_->gradients(), [&](int rank, std::span<const float> gradients) {
    trace_->write_gradients(row, rank, tensor_views(gradients, model_->tensors()));
  });
}

void Trainer::finish_outputs() {
  on_rank_zero_agreed(control(), [&] {
    if (log_) log_->close();
    if (trace_) trace_->close();
  });
  if (timeline_) {
    clock().settle();  // the exchanges waited for by the last checkpoint, on the simulated clock
    timeline_->close();
  }
}

}  // namespace lowcomm::cli

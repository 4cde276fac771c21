// The training loop's set-up, the run and one step on every rank: its own batch (data loader,
// disjoint per rank) → forward/backward → local gradient clipped → NaN/Inf and stop-signal check
// (one tiny all-reduce on the uncounted control channel) → Strategy::step (the counted, modelled
// communication) → the simulated clock settled → rank 0 logs the row. Losses, norms and byte
// counts reach rank 0 over the control channel too (rank 0's agreement on having written them is
// one more tiny all-reduce), so the log never perturbs what it measures.
#include "trainer.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "lowcomm/comm/host_names.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/clip.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "initial_parameters.hpp"
#include "nonfinite_advice.hpp"
#include "stop_signal.hpp"

namespace lowcomm::cli {

Trainer::Trainer(MpiSession& mpi, const TrainArguments& arguments, const Config& config)
    : mpi_(mpi), arguments_(arguments), config_(config), run_dir_(arguments.out), store_(run_dir_, mpi.control()),
      loop_(loop_options(config)), steps_(loop_.steps), hosts_(gather_host_names(mpi.control())) {
  const auto seed = static_cast<std::uint64_t>(config.get_int("seed"));
  agree_on_failure(control(), [&] {
    const gpt::GptConfig shape = model_config(config);
    data_.emplace(make_training_data(config, mpi.rank(), mpi.size()));
    ExecutionContext execution = execution_context_from_config(config);
    execution.precision = *kernels::precision_named(loop_.precision);  // the schema's choices
    model_ = std::make_unique<gpt::GptModel>(shape, seed, execution);
    network_.emplace(config, mpi.control());
    recorder_.emplace(clock(), mpi.control());
    // An exchange in flight (DeMo's stale step, streaming DiLoCo, DDP's buckets) moves during
    // the passes, and modelled compute is charged block by block.
    model_->set_between_blocks([this] {
      comm().progress();
      if (charging_) charge_modelled_compute(/*step_done=*/false);
    });
    strategy_ = StrategyRegistry::global().create(
        {.comm = comm(), .tensors = model_->tensors(), .config = config, .seed = seed, .execution = execution,
         .gradients_clipped = loop_.grad_clip > 0});
    schedule_.emplace(LrSchedule::from_config(config));
    if (!arguments.record_trace.empty() && arguments.resume) {
      throw ConfigError("--record-trace records a whole run: it cannot be combined with --resume");
    }
  });
}

void Trainer::run() {
  prepare_run_folder();
  restore();
  if (!resumed_ && !loop_.init_from.empty()) {
    load_initial_parameters(loop_.init_from, config_, control(), model_->parameters());
  }
  if (first_step_ >= steps_) {
    if (mpi_.rank() == 0) {
      std::printf("lowcomm train: %s already holds all %lld step%s\n", run_dir_.c_str(),
                  static_cast<long long>(steps_), steps_ == 1 ? "" : "s");
    }
    return;
  }
  open_log();
  open_trace();
  if (!arguments_.timeline.empty()) timeline_.emplace(arguments_.timeline, control());
  if (mpi_.rank() == 0) print_header();
  ProgressLine progress(first_step_, steps_, loop_.progress_every);
  for (std::int64_t step = first_step_; step < steps_; ++step) {
    if (!train_step(step, progress)) return;
  }
  progress.finish();
  finish_outputs();
  if (mpi_.rank() == 0) {
    std::printf("lowcomm train: done, %lld step%s; log %s, checkpoint %s\n", static_cast<long long>(steps_),
                steps_ == 1 ? "" : "s", log_path().c_str(), store_.folder().c_str());
  }
}

// What happens in one step. False when the run stops here (a signal: checkpoint saved, exit 0).
bool Trainer::train_step(std::int64_t step, ProgressLine& progress) {
  const double lr = schedule_->at(static_cast<std::uint64_t>(step));
  clock().resume_compute();  // what ran since the last step (validation, checkpoints) is not the step's
  double rank_tokens = 0;
  const RankStep mine = compute_gradients(step, lr, rank_tokens);

  // Agree on NaN/Inf (the lowest rank that saw one reports it) and on a stop signal.
  const bool finite = std::isfinite(mine.loss) && std::isfinite(mine.grad_norm);
  std::int32_t flags[2] = {finite ? mpi_.size() : mpi_.rank(), stop_signal_received() ? 0 : 1};
  control().min_each(std::span<std::int32_t>(flags));
  if (flags[0] < mpi_.size()) {
    stop_or_skip_nonfinite(step, lr, mine, flags[0], rank_tokens, progress);
  } else {
    exchange_and_log(step, lr, mine, rank_tokens, progress);
  }
  return after_step(step, /*stop=*/flags[1] == 0, progress);
}

// Forward and backward over the step's micro-batches, then the gradient clipped. `rank_tokens`
// gets the tokens this rank trained on.
RankStep Trainer::compute_gradients(std::int64_t step, double lr, double& rank_tokens) {
  // Micro-batch m of step s is the loader's batch s·M + m: the windows of one batch of M·B rows.
  const std::int64_t micro_batches = loop_.micro_batches;
  const auto start = SteadyClock::now();
  RankStep mine;
  if (clock().options().modelled_compute()) start_modelled_compute();
  strategy_->before_forward(static_cast<std::uint64_t>(step), lr, model_->parameter_spans());
  model_->zero_gradients();
  int b = 0, t = 0;
  // A strategy that overlaps hears of each finished gradient of the last micro-batch (the
  // earlier ones are not final).
  const gpt::GptModel::GradientsFinished ready = [&](std::span<const std::size_t> tensors) {
    strategy_->gradients_ready(static_cast<std::uint64_t>(step), tensors, model_->gradient_views());
  };
  for (std::int64_t m = 0; m < micro_batches; ++m) {
    const Batch batch = data_->loader.train_batch(step * micro_batches + m);
    b = static_cast<int>(batch.rows);
    t = static_cast<int>(batch.seq_len);
    const float loss = model_->add_gradients(batch.tokens, batch.targets, b, t, micro_batches * b * t,
                                             m + 1 == micro_batches ? ready : gpt::GptModel::GradientsFinished{});
    mine.loss += static_cast<double>(loss) / static_cast<double>(micro_batches);
  }
  rank_tokens = static_cast<double>(b * static_cast<int>(micro_batches)) * t;
  if (charging_) charge_modelled_compute(/*step_done=*/true);
  const double clip = loop_.grad_clip;
  mine.grad_norm = clip > 0 ? clip_by_global_norm(model_->gradient_spans(), clip)
                            : global_norm(model_->gradient_views());
  mine.compute_s = seconds_since(start);
  return mine;
}

// Modelled compute: the step's compute (configured, or its FLOPs at the configured rate), charged
// from here to the end of the passes.
void Trainer::start_modelled_compute() {
  const gpt::GptConfig& shape = model_->config();
  const LoaderOptions& batches = data_->loader.options();  // every training batch has this shape
  const auto tokens = static_cast<double>(loop_.micro_batches * batches.batch_size * batches.seq_len);
  step_compute_s_ = clock().options().step_compute_seconds(tokens * shape.training_flops_per_token(batches.seq_len));
  blocks_per_step_ = 2 * shape.layers * loop_.micro_batches;  // forward and backward, each micro-batch
  blocks_done_ = 0;
  charged_in_step_ = 0;
  charging_ = true;
}

// Block k of the step's K (forward and backward) has charged k / (K + 1) of the step's compute,
// the end of the passes all of it.
void Trainer::charge_modelled_compute(bool step_done) {
  if (!step_done) ++blocks_done_;
  const double due = step_done ? step_compute_s_
                               : step_compute_s_ * static_cast<double>(blocks_done_) /
                                     static_cast<double>(blocks_per_step_ + 1);
  clock().charge_compute(due - charged_in_step_);
  charged_in_step_ = due;
  if (step_done) charging_ = false;
}

// The strategy's step (the counted, modelled exchanges), settled on the simulated clock, logged.
void Trainer::exchange_and_log(std::int64_t step, double lr, const RankStep& mine, double rank_tokens,
                               ProgressLine& progress) {
  const StrategyStepReport report =
      strategy_->step(static_cast<std::uint64_t>(step), lr, model_->parameter_spans(), model_->gradient_views());
  const StepTraffic traffic = recorder_->settle(report.sync);
  clock_s_ = traffic.simulated_s;  // identical on every rank
  record_trace();
  const double loss = log_step(step, lr, mine, traffic, rank_tokens);
  loss_of_step_[step] = loss;  // rank 0's: the mean over ranks
  sent_total_ += static_cast<double>(traffic.sent);
  modelled_total_ += traffic.modelled_s;
  tokens_since_start_ += rank_tokens * mpi_.size();
  if (mpi_.rank() == 0) {
    progress.print({.step = step, .loss = loss, .lr = lr,
                    .tokens_per_s = tokens_since_start_ / seconds_since(started_),
                    .sent_bytes_total = sent_total_, .modelled_comm_s_total = modelled_total_,
                    .simulated_s = traffic.simulated_s});
  }
}

// train.nonfinite: NaN/Inf on `reporting_rank` (the lowest that saw it). `skip` drops the step and
// logs its loss as NaN; `stop` checkpoints the state before it and ends every rank with advice.
void Trainer::stop_or_skip_nonfinite(std::int64_t step, double lr, RankStep mine, int reporting_rank,
                                     double rank_tokens, ProgressLine& progress) {
  strategy_->cancel_step();  // what it started from this step's gradients is dropped
  const bool skip = loop_.nonfinite == "skip";
  if (reporting_rank == mpi_.rank()) {
    const std::string tensor = nonfinite_tensor(*model_);
    progress.finish();
    std::fprintf(stderr, "lowcomm: step %lld: the loss is %g and the gradient norm %g on rank %d%s; %s\n",
                 static_cast<long long>(step), mine.loss, mine.grad_norm, mpi_.rank(),
                 tensor.empty() ? "" : fmt::format(" (tensor '{}' holds NaN or Inf)", tensor).c_str(),
                 skip ? "skipping the step (train.nonfinite = skip)"
                      : "stopping with a checkpoint of the state before it (train.nonfinite = stop)");
  }
  if (!skip) {
    save_checkpoint(step, /*keep=*/0);  // every older checkpoint stays: the way back
    finish_outputs();
    if (mpi_.rank() == 0) {
      const std::string advice = advice_after_nonfinite(step, loss_of_step_, store_.steps(), loop_.keep_checkpoints,
                                                        loop_.checkpoint_every);
      std::fprintf(stderr, "%s\n", advice.c_str());
      std::fflush(stderr);
    }
    // Every rank stops here together; the message was printed above.
    agree_on_failure(control(), [] { throw ReportedFailure(kNonFiniteExit); });
  }
  mine.loss = std::numeric_limits<double>::quiet_NaN();
  log_step(step, lr, mine, StepTraffic{}, rank_tokens);
}

// Validation and checkpoints on their intervals and at the end; false when a stop signal ends
// the run here (with a checkpoint of the next step).
bool Trainer::after_step(std::int64_t step, bool stop, ProgressLine& progress) {
  const bool last = step + 1 == steps_;
  const std::int64_t eval_every = loop_.eval_every;
  if (last || (eval_every > 0 && (step + 1) % eval_every == 0)) {
    const TimelineScope span("compute", "evaluate");
    evaluate(step, progress);
  }
  const std::int64_t every = loop_.checkpoint_every;
  if (last || stop || (every > 0 && (step + 1) % every == 0)) {
    const TimelineScope span("io", "checkpoint");
    save_checkpoint(step + 1, loop_.keep_checkpoints);
  }
  if (timeline_ && (step + 1) % kTimelineFlushSteps == 0) timeline_->flush();
  if (stop && !last) {
    finish_outputs();
    if (mpi_.rank() == 0) {
      progress.finish();
      std::printf("lowcomm train: signal %d received: stopped after step %lld with a checkpoint of step %lld in %s; "
                  "continue with --resume\n",
                  stop_signal_number(), static_cast<long long>(step), static_cast<long long>(step + 1),
                  store_.folder().c_str());
    }
    return false;
  }
  return true;
}

}  // namespace lowcomm::cli

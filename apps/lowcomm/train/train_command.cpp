// `lowcomm train`: trains the GPT-style reference model (apps/gpt) on W MPI ranks with any
// strategy, compressor, optimizer, schedule and network scenario, writing one HDF5 run log
// (docs/log-format.md) and checkpoints to --out DIR. docs/training.md is the user's guide.
//
// One step on every rank: its own batch (data loader, disjoint per rank) → forward/backward →
// local gradient clipped → NaN/Inf and stop-signal check (one tiny all-reduce on the uncounted
// control channel) → Strategy::step (the counted, modelled communication) → the simulated clock
// settled → rank 0 logs the row. Losses, norms and byte counts reach rank 0 over the control
// channel too (rank 0's agreement on having written them is one more tiny all-reduce), so the log
// never perturbs what it measures.
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpt/model.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/host_names.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/data/data_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/gradient_trace.hpp"
#include "lowcomm/log/run_log.hpp"
#include "lowcomm/optim/clip.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "common/mpi_session.hpp"
#include "common/step_recorder.hpp"
#include "common/run_config.hpp"
#include "checkpoint_store.hpp"
#include "fault_injection.hpp"
#include "initial_parameters.hpp"
#include "run_folder_lock.hpp"
#include "progress_line.hpp"
#include "resume_config.hpp"
#include "stop_signal.hpp"
#include "timeline_file.hpp"
#include "train_keys.hpp"

namespace lowcomm::cli {

namespace {

struct TrainArguments {
  ConfigArguments config;
  std::string out = "runs/train";
  bool resume = false;
  std::optional<std::int64_t> resume_from;  // implies resume
  bool force = false;
  std::string record_trace;
  std::string timeline;
};

// What each rank contributes to a row of the log besides its traffic (the step recorder's).
struct RankStep {
  double loss = 0, grad_norm = 0, compute_s = 0;
};

// The first tensor whose gradient holds NaN or Inf, or "" when all are finite.
std::string nonfinite_tensor(const gpt::GptModel& model) {
  const std::span<const std::span<float>> grads = model.gradient_spans();
  for (std::size_t t = 0; t < grads.size(); ++t) {
    if (!std::ranges::all_of(grads[t], [](float g) { return std::isfinite(g); })) return model.tensors()[t].name;
  }
  return "";
}

class Trainer {
 public:
  Trainer(MpiSession& mpi, const TrainArguments& arguments, const Config& config)
      : mpi_(mpi), arguments_(arguments), config_(config), run_dir_(arguments.out),
        store_(run_dir_, mpi.control()), loop_(loop_options(config)), steps_(loop_.steps) {
    const auto seed = static_cast<std::uint64_t>(config.get_int("seed"));
    agree_on_failure(control(), [&] {
      const gpt::GptConfig shape = model_config(config);
      data_.emplace(make_training_data(config, mpi.rank(), mpi.size()));
      ExecutionContext execution = execution_context_from_config(config);
      execution.precision = *kernels::precision_named(loop_.precision);  // the schema's choices
      model_ = std::make_unique<gpt::GptModel>(shape, seed, execution);
      comm_.emplace(MPI_COMM_WORLD, communicator_options_from_config(config, mpi.size()));
      recorder_.emplace(*comm_, mpi.control());
      // An exchange in flight (DeMo's stale step, streaming DiLoCo, DDP's buckets) moves during
      // the passes.
      model_->set_between_blocks([this] { comm_->progress(); });
      strategy_ = StrategyRegistry::global().create(
          {.comm = *comm_, .tensors = model_->tensors(), .config = config, .seed = seed, .execution = execution,
           .gradients_clipped = loop_.grad_clip > 0});
      schedule_.emplace(LrSchedule::from_config(config));
      if (!arguments.record_trace.empty() && arguments.resume) {
        throw ConfigError("--record-trace records a whole run: it cannot be combined with --resume");
      }
    });
  }
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  void run() {
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

 private:
  std::filesystem::path log_path() const { return run_dir_ / "log.h5"; }

  void prepare_run_folder() {
    on_rank_zero_agreed(control(), [&] {
      std::filesystem::create_directories(run_dir_);
      lock_.emplace(run_dir_);  // before anything in the folder is read or removed
      const bool started = std::filesystem::exists(log_path()) || std::filesystem::exists(store_.folder());
      if (started && !arguments_.resume && !arguments_.force) {
        throw ConfigError(fmt::format("{} holds a run already: pass --resume to continue it, --force to start "
                                      "over, or choose another --out", run_dir_.string()));
      }
      if (arguments_.force && !arguments_.resume) {
        std::filesystem::remove(log_path());
        std::filesystem::remove_all(store_.folder());
      }
    });
  }

  void restore() {
    if (!arguments_.resume) return;
    if (arguments_.resume_from) store_.rewind_to(*arguments_.resume_from);
    const std::optional<std::int64_t> latest = store_.latest();
    if (!latest) return;  // a requeued job killed before its first checkpoint starts over
    agree_on_failure(control(), [&] {
      const StateDict state = load_checkpoint(*latest);
      if (state.integer("train/world_size") != mpi_.size()) {
        throw ConfigError(fmt::format("the checkpoint in {} was written by {} ranks: resume with mpiexec -n {}",
                                      store_.folder().string(), state.integer("train/world_size"),
                                      state.integer("train/world_size")));
      }
      if (state.integer("train/config_hash") != resumable_hash(config_)) {
        throw ConfigError(fmt::format("the configuration differs from the one {} was started with{} (on "
                                      "--resume only {} may change): pass the same --config and --set options, "
                                      "or start a new --out",
                                      run_dir_.string(), changed_keys(), resumable_key_list()));
      }
      const std::vector<float>& params = state.floats("model/parameters");
      if (params.size() != model_->parameters().size()) throw Error("the checkpoint's model has another size");
      std::ranges::copy(params, model_->parameters().begin());
      strategy_->load_state(state, "strategy/");
      clock_s_ = static_cast<double>(state.integer("train/simulated_ns")) * 1e-9;
      comm_->advance_clock(clock_s_);
      // The progress line's totals carry on as the clock does (checkpoints from before they were
      // kept start them at 0).
      if (state.contains("train/sent_bytes")) sent_total_ = static_cast<double>(state.integer("train/sent_bytes"));
      if (state.contains("train/modelled_comm_ns")) {
        modelled_total_ = static_cast<double>(state.integer("train/modelled_comm_ns")) * 1e-9;
      }
    });
    first_step_ = *latest;
    resumed_ = true;
  }

  // ": a = 2 (was 1), ..." against the configuration the log was started with, where the log
  // holds it ("" when it cannot be read: the refusal then names the keys that may change only).
  std::string changed_keys() const {
    try {
      const std::optional<std::string> started_text = read_run_config(log_path());
      if (!started_text) return "";
      const Config started = Config::from_string(*started_text, train_schema());
      const std::vector<std::string> changes =
          config_.with(resumable_keys()).changes_since(started.with(resumable_keys()));
      std::string list;
      for (const std::string& change : changes) list += (list.empty() ? ": " : ", ") + change;
      return list;
    } catch (const Error&) {
      return "";  // a log from another version, or damaged: the refusal stands without the list
    }
  }

  // The checkpoint of `step`; one that cannot be read (damaged after it was written) is refused
  // naming the older kept checkpoints the run can go back to instead.
  StateDict load_checkpoint(std::int64_t step) const {
    try {
      return store_.load(step);
    } catch (const LogError& e) {
      std::string older;
      std::optional<std::int64_t> newest_older;
      for (const std::int64_t kept : store_.steps()) {
        if (kept >= step) continue;
        older += fmt::format("{}{}", older.empty() ? "" : ", ", kept);
        newest_older = kept;
      }
      if (!newest_older) throw;
      throw LogError(fmt::format("{}; or go back to an older kept checkpoint (steps {}): --resume-from {}", e.what(),
                                 older, *newest_older));
    }
  }

  void open_log() {
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
      if (data_->val_loss_floor) metadata.extra["val_loss_floor"] = fmt::format("{:.17g}", *data_->val_loss_floor);
      if (data_->loss_floor) metadata.extra["loss_floor"] = fmt::format("{:.17g}", *data_->loss_floor);
      log_.emplace(RunLog::create(log_path(), schema, metadata, {}, arguments_.force));
    });
  }

  // A resumed log must hold one row for each step before the checkpoint's: otherwise rows were
  // lost (a log from an older lowcomm, whose checkpoint could overtake the log's last flush), and
  // appending would leave a gap that the analysis would silently read across.
  void require_every_row_before(std::int64_t step) const {
    const std::int64_t rows = log_->rows("steps");
    if (rows == step) return;
    throw LogError(fmt::format("{} holds {} step rows but the checkpoint resumes at step {}: the rows of {} steps "
                               "are missing, so the resumed log would have a gap. Start over with --force, or "
                               "resume a copy of the run folder after checking its log",
                               log_path().string(), rows, step, step - rows));
  }

  void open_trace() {
    if (arguments_.record_trace.empty()) return;
    on_rank_zero_agreed(control(), [&] {
      const std::span<const std::span<float>> params = model_->parameter_spans();
      const std::vector<std::span<const float>> initial(params.begin(), params.end());
      trace_.emplace(arguments_.record_trace, mpi_.size(), model_->tensors(), initial);
    });
  }

  void print_header() const {
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

  // One step; false when the run stops here (a signal: checkpoint saved, exit 0).
  bool train_step(std::int64_t step, ProgressLine& progress) {
    // Micro-batch m of step s is the loader's batch s·M + m: the windows of one batch of M·B rows.
    const std::int64_t micro_batches = loop_.micro_batches;
    const auto start = SteadyClock::now();
    RankStep mine;
    const double lr = schedule_->at(static_cast<std::uint64_t>(step));
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
    b *= static_cast<int>(micro_batches);  // the step's rows, for the token counts below
    const double clip = loop_.grad_clip;
    mine.grad_norm = clip > 0 ? clip_by_global_norm(model_->gradient_spans(), clip)
                              : global_norm(model_->gradient_views());
    mine.compute_s = seconds_since(start);

    // Agree on NaN/Inf (the lowest rank that saw one reports it) and on a stop signal.
    const bool finite = std::isfinite(mine.loss) && std::isfinite(mine.grad_norm);
    std::int32_t flags[2] = {finite ? mpi_.size() : mpi_.rank(), stop_signal_received() ? 0 : 1};
    control().min_each(std::span<std::int32_t>(flags));
    const bool stop = flags[1] == 0;
    if (flags[0] < mpi_.size()) {
      strategy_->cancel_step();  // what it started from this step's gradients is dropped
      const bool skip = loop_.nonfinite == "skip";
      if (flags[0] == mpi_.rank()) {
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
        if (mpi_.rank() == 0) advise_after_nonfinite(step);
        // Every rank stops here together; the message was printed above.
        agree_on_failure(control(), [] { throw ReportedFailure(kNonFiniteExit); });
      }
      mine.loss = std::numeric_limits<double>::quiet_NaN();
      log_step(step, lr, mine, StepTraffic{}, static_cast<double>(b) * t);
    } else {
      const StrategyStepReport report = strategy_->step(static_cast<std::uint64_t>(step), lr,
                                                        model_->parameter_spans(), model_->gradient_views());
      const StepTraffic traffic = recorder_->settle(report.sync);
      clock_s_ = traffic.simulated_s;  // identical on every rank
      record_trace();
      const double loss = log_step(step, lr, mine, traffic, static_cast<double>(b) * t);
      loss_of_step_[step] = loss;  // rank 0's: the mean over ranks
      sent_total_ += static_cast<double>(traffic.sent);
      modelled_total_ += traffic.modelled_s;
      tokens_since_start_ += static_cast<double>(b) * t * mpi_.size();
      if (mpi_.rank() == 0) {
        progress.print({.step = step, .loss = loss, .lr = lr,
                        .tokens_per_s = tokens_since_start_ / seconds_since(started_),
                        .sent_bytes_total = sent_total_, .modelled_comm_s_total = modelled_total_,
                        .simulated_s = traffic.simulated_s});
      }
    }

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

  // Gathers every rank's numbers to rank 0, which writes the row; returns the mean loss there.
  double log_step(std::int64_t step, double lr, const RankStep& mine, const StepTraffic& traffic,
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

  void evaluate(std::int64_t step, ProgressLine& progress) {
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

  // Crash-consistent: the log is flushed up to next_step before the checkpoint of next_step can
  // become `latest`, so a resumed run never lacks the rows before the step it resumes at.
  void save_checkpoint(std::int64_t next_step, std::int64_t keep) {
    on_rank_zero_agreed(control(), [&] { log_->flush(); });
    fault_point("log-flushed", next_step, mpi_.rank());
    StateDict state;
    state.put("model/parameters", model_->parameters());
    strategy_->save_state(state, "strategy/");
    state.put("train/next_step", next_step);
    state.put("train/world_size", mpi_.size());
    state.put("train/config_hash", resumable_hash(config_));
    state.put("train/simulated_ns", std::llround(clock_s_ * 1e9));
    state.put("train/sent_bytes", std::llround(sent_total_));
    state.put("train/modelled_comm_ns", std::llround(modelled_total_ * 1e9));
    store_.save(next_step, state, keep);
  }

  // After a stop on NaN/Inf at `step`: the checkpoint just written holds the parameters that gave
  // it, so the advice points at the newest older one whose loss was finite and not diverging
  // (at most twice the lowest loss of this process), if one is kept; else, when older ones are
  // kept but all of them diverged already, at the one whose loss was lowest.
  void advise_after_nonfinite(std::int64_t step) const {
    double lowest = std::numeric_limits<double>::infinity();
    for (const auto& [s, loss] : loss_of_step_) {
      if (std::isfinite(loss)) lowest = std::min(lowest, loss);
    }
    const auto loss_of = [&](std::int64_t kept) -> std::optional<double> {
      const auto logged = loss_of_step_.find(kept);
      return logged == loss_of_step_.end() ? std::nullopt : std::optional(logged->second);
    };
    std::vector<std::int64_t> older;
    std::optional<std::int64_t> back, least;
    for (const std::int64_t kept : store_.steps()) {
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
      std::fprintf(stderr, "lowcomm: the checkpoint of step %lld holds the parameters that gave NaN/Inf. The newest "
                           "good one is step %lld%s: go back to it with a lower schedule.lr or a train.grad_clip, "
                           "--resume-from %lld\n",
                   static_cast<long long>(step), static_cast<long long>(*back), with_loss(*back).c_str(),
                   static_cast<long long>(*back));
    } else if (!older.empty()) {
      std::fprintf(stderr, "lowcomm: the %zu checkpoint%s kept before step %lld (steps %lld to %lld) all hold parameters "
                           "whose loss was already diverging (above twice the lowest, %.4f, or not finite)%s: start "
                           "over with --force and a lower schedule.lr or a train.grad_clip%s\n",
                   older.size(), older.size() == 1 ? "" : "s", static_cast<long long>(step),
                   static_cast<long long>(older.front()), static_cast<long long>(older.back()), lowest,
                   least ? fmt::format("; the least bad is step {}{}", *least, with_loss(*least)).c_str() : "",
                   least ? fmt::format(", or --resume-from {} with them", *least).c_str() : "");
    } else {
      std::fprintf(stderr, "lowcomm: no checkpoint before step %lld is kept (train.keep_checkpoints = %lld, "
                           "train.checkpoint_every = %lld): lower schedule.lr or set train.grad_clip and start "
                           "over with --force, or --resume to retry from step %lld\n",
                   static_cast<long long>(step), static_cast<long long>(loop_.keep_checkpoints),
                   static_cast<long long>(loop_.checkpoint_every), static_cast<long long>(step));
    }
    std::fflush(stderr);
  }

  void record_trace() {
    if (arguments_.record_trace.empty()) return;
    const std::int64_t row = mpi_.rank() == 0 ? trace_->add_step() : 0;
    control().stream_to_root(model_->gradients(), [&](int rank, std::span<const float> gradients) {
      trace_->write_gradients(row, rank, tensor_views(gradients, model_->tensors()));
    });
  }

  const ControlChannel& control() const { return mpi_.control(); }

  void finish_outputs() {
    on_rank_zero_agreed(control(), [&] {
      if (log_) log_->close();
      if (trace_) trace_->close();
    });
    if (timeline_) {
      comm_->synchronize_clock();  // the exchanges waited for by the last checkpoint, on the simulated clock
      timeline_->close();
    }
  }

  MpiSession& mpi_;
  const TrainArguments& arguments_;
  const Config& config_;
  std::filesystem::path run_dir_;
  CheckpointStore store_;
  LoopOptions loop_;  // train.*
  std::int64_t steps_;
  std::vector<std::string> hosts_ = gather_host_names(mpi_.control());
  std::optional<RunFolderLock> lock_;  // rank 0 holds it for the whole run, released after the log closes

  std::optional<TrainingData> data_;
  std::unique_ptr<gpt::GptModel> model_;
  std::optional<Communicator> comm_;
  std::optional<StepRecorder> recorder_;  // the log's traffic columns, `present` included
  std::unique_ptr<Strategy> strategy_;
  std::optional<LrSchedule> schedule_;
  std::optional<RunLog> log_;
  std::optional<GradientTraceWriter> trace_;
  std::optional<TimelineFile> timeline_;
  // Every rank's timeline spans go to rank 0 this often (and at the end): a bound on what a rank
  // holds, at the price of one gather of text per flush.
  static constexpr std::int64_t kTimelineFlushSteps = 20;

  std::int64_t first_step_ = 0;
  bool resumed_ = false;
  double clock_s_ = 0;  // the simulated clock at the end of the last step, agreed by all ranks
  SteadyClock::time_point started_ = SteadyClock::now();
  double sent_total_ = 0, modelled_total_ = 0, tokens_since_start_ = 0;
  std::map<std::int64_t, double> loss_of_step_;  // rank 0: the mean loss of each step this process ran
};

void run(const TrainArguments& arguments) {
  // Before MPI starts (which takes a while): a SIGUSR1 or SIGTERM that comes early stops the run
  // cleanly at its first step boundary instead of killing it.
  install_stop_signal_handlers();
  run_with_mpi([&](MpiSession& mpi) {
    install_stop_signal_handlers();  // again: the MPI library may install its own at start-up
    agree_on_failure(mpi.control(), [&] {
      if (arguments.out.empty()) throw ConfigError("--out '' names no folder: give the run folder, e.g. --out runs/demo");
    });
    const Config config = train_configuration(arguments.config, arguments.resume, arguments.out, mpi.control());
    Trainer trainer(mpi, arguments, config);
    trainer.run();
  });
}

}  // namespace

void add_train_command(CLI::App& app) {
  CLI::App* train = app.add_subcommand(
      "train", "Train the GPT-style reference model with any strategy, compressor and network scenario");
  static TrainArguments arguments;  // CLI11 binds options to storage that outlives parsing
  add_config_arguments(*train, arguments.config);
  train->add_option("--out", arguments.out, "run folder: log.h5 and checkpoints/ (default runs/train)")
      ->type_name("DIR");
  train->add_flag("--resume", arguments.resume,
                  "continue from the last checkpoint in --out and append to its log, with the configuration "
                  "the log holds (--set may change train.steps, the *_every intervals and the other keys "
                  "docs/training.md lists; with --config, give the run's own); starts afresh when there is no "
                  "checkpoint yet, as a requeued Slurm job needs");
  train->add_option("--resume-from", arguments.resume_from,
                    "like --resume, from the kept checkpoint of this step (train.keep_checkpoints) instead "
                    "of the last; the checkpoints and log rows after it are dropped")
      ->type_name("STEP")
      ->check(CLI::NonNegativeNumber);
  train->add_flag("--force", arguments.force, "start over, deleting the log and checkpoints in --out");
  train->add_option("--timeline", arguments.timeline,
                    "also write a Chrome trace-event timeline (Perfetto, chrome://tracing) of every rank's "
                    "forward, backward, codec, collectives and updates, on the wall clock and on the simulated "
                    "clock (docs/training.md)")
      ->type_name("FILE.json");
  train->add_option("--record-trace", arguments.record_trace,
                    "also write every rank's gradients of every step, for `lowcomm replay`")
      ->type_name("FILE.h5");
  train->footer(fmt::format("Keys: {}; `lowcomm info` lists them. docs/training.md walks through a run.",
                            key_sections(train_schema())));
  train->callback([] {
    if (arguments.resume_from) arguments.resume = true;
    run(arguments);
  });
}

}  // namespace lowcomm::cli

// The trainer's run folder, checkpoints and resuming: the folder is claimed (or refused) before
// anything in it is read, a resume restores the model, the strategy's state, the simulated clock
// and the progress totals from the latest (or a chosen) checkpoint and refuses a changed
// configuration naming the keys; a checkpoint is written only after the log rows before it.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "lowcomm/error.hpp"
#include "fault_injection.hpp"
#include "resume_config.hpp"
#include "trainer.hpp"

namespace lowcomm::cli {

void Trainer::prepare_run_folder() {
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

void Trainer::restore() {
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
    // The clock's own bits where the checkpoint keeps them (a modelled clock then repeats
    // bitwise), else its nanoseconds (checkpoints from before they were kept).
    clock_s_ = state.contains("train/simulated_bits")
                   ? std::bit_cast<double>(state.integer("train/simulated_bits"))
                   : static_cast<double>(state.integer("train/simulated_ns")) * 1e-9;
    clock().advance(clock_s_);
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
std::string Trainer::changed_keys() const {
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
StateDict Trainer::load_checkpoint(std::int64_t step) const {
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

// Crash-consistent: the log is flushed up to next_step before the checkpoint of next_step can
// become `latest`, so a resumed run never lacks the rows before the step it resumes at.
void Trainer::save_checkpoint(std::int64_t next_step, std::int64_t keep) {
  on_rank_zero_agreed(control(), [&] { log_->flush(); });
  fault_point("log-flushed", next_step, mpi_.rank());
  StateDict state;
  state.put("model/parameters", model_->parameters());
  strategy_->save_state(state, "strategy/");
  state.put("train/next_step", next_step);
  state.put("train/world_size", mpi_.size());
  state.put("train/config_hash", resumable_hash(config_));
  state.put("train/simulated_ns", std::llround(clock_s_ * 1e9));
  state.put("train/simulated_bits", std::bit_cast<std::int64_t>(clock_s_));
  state.put("train/sent_bytes", std::llround(sent_total_));
  state.put("train/modelled_comm_ns", std::llround(modelled_total_ * 1e9));
  store_.save(next_step, state, keep);
}

}  // namespace lowcomm::cli

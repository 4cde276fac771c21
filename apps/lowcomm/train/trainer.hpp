#pragma once
// The training loop of `lowcomm train`, one instance per rank. Its methods live in rooms of their
// own: trainer.cpp (set-up, the run and one step), trainer_resume.cpp (the run folder,
// checkpoints and resuming), trainer_outputs.cpp (the log, validation, the gradient trace and the
// timeline), nonfinite_advice.cpp (where to go back to after NaN/Inf).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "gpt/model.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/data/data_config.hpp"
#include "lowcomm/log/gradient_trace.hpp"
#include "lowcomm/log/run_log.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/strategy/strategy.hpp"
#include "common/clocked_communicator.hpp"
#include "common/mpi_session.hpp"
#include "common/step_recorder.hpp"
#include "checkpoint_store.hpp"
#include "progress_line.hpp"
#include "run_folder_lock.hpp"
#include "timeline_file.hpp"
#include "train_arguments.hpp"
#include "train_keys.hpp"

namespace lowcomm::cli {

// What each rank contributes to a row of the log besides its traffic (the step recorder's).
struct RankStep {
  double loss = 0, grad_norm = 0, compute_s = 0;
};

class Trainer {
 public:
  Trainer(MpiSession& mpi, const TrainArguments& arguments, const Config& config);
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Every step from the first not yet trained (0, or the resumed checkpoint's) to train.steps.
  void run();

 private:
  // trainer.cpp: one step.
  bool train_step(std::int64_t step, ProgressLine& progress);  // false: the run stops here
  RankStep compute_gradients(std::int64_t step, double lr, double& rank_tokens);
  void exchange_and_log(std::int64_t step, double lr, const RankStep& mine, double rank_tokens,
                        ProgressLine& progress);
  void stop_or_skip_nonfinite(std::int64_t step, double lr, RankStep mine, int reporting_rank,
                              double rank_tokens, ProgressLine& progress);
  bool after_step(std::int64_t step, bool stop, ProgressLine& progress);
  void start_modelled_compute();
  void charge_modelled_compute(bool step_done);

  // trainer_resume.cpp: the run folder, checkpoints and resuming.
  std::filesystem::path log_path() const { return run_dir_ / "log.h5"; }
  void prepare_run_folder();
  void restore();
  std::string changed_keys() const;
  StateDict load_checkpoint(std::int64_t step) const;
  void save_checkpoint(std::int64_t next_step, std::int64_t keep);

  // trainer_outputs.cpp: what the run writes besides checkpoints.
  void open_log();
  void require_every_row_before(std::int64_t step) const;
  void open_trace();
  void print_header() const;
  double log_step(std::int64_t step, double lr, const RankStep& mine, const StepTraffic& traffic,
                  double rank_tokens);
  void evaluate(std::int64_t step, ProgressLine& progress);
  void record_trace();
  void finish_outputs();

  const ControlChannel& control() const { return mpi_.control(); }
  RunClock& clock() { return network_->clock; }
  Communicator& comm() { return network_->comm; }

  MpiSession& mpi_;
  const TrainArguments& arguments_;
  const Config& config_;
  std::filesystem::path run_dir_;
  CheckpointStore store_;
  LoopOptions loop_;  // train.*
  std::int64_t steps_;
  std::vector<std::string> hosts_;
  std::optional<RunFolderLock> lock_;  // rank 0 holds it for the whole run, released after the log closes

  std::optional<TrainingData> data_;
  std::unique_ptr<gpt::GptModel> model_;
  std::optional<ClockedCommunicator> network_;  // the run's clock and the Communicator on it
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
  // Modelled compute (cluster.step_compute_ms or compute_tflops): the step's compute is charged
  // to the clock in equal parts at each block boundary of the passes and at their end, so that a
  // collective started during the backward pass overlaps the compute after it.
  double step_compute_s_ = 0;
  std::int64_t blocks_per_step_ = 0, blocks_done_ = 0;
  double charged_in_step_ = 0;
  bool charging_ = false;  // during the step's passes (not validation's)
  SteadyClock::time_point started_ = SteadyClock::now();
  double sent_total_ = 0, modelled_total_ = 0, tokens_since_start_ = 0;
  std::map<std::int64_t, double> loss_of_step_;  // rank 0: the mean loss of each step this process ran
};

}  // namespace lowcomm::cli

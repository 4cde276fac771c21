// `data_parallel`: every step, the local gradients go through the configured compressor
// (compressor.*) and the local optimizer (optimizer.*) applies their reconstructed mean. With
// compressor `none` this is synchronous DDP: every rank applies the same exact mean.
//
// `overlap = true` is PyTorch DDP's bucketed overlap: each bucket (compressor.granularity =
// bucket) is its own collective, started as soon as the backward pass has finished its tensors'
// gradients (gradients_ready, last layer first), so its exchange runs during the rest of the
// backward pass; step() starts any bucket not started yet, waits for all in bucket order and
// updates. Only with compressor none, which holds no state (a step cancelled for NaN/Inf after
// some buckets left changes nothing), and without clipping (which needs the whole gradient first).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "builtins.hpp"
#include "../compressed_sync.hpp"
#include "../tensor_buffers.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm::strategy {

namespace {

struct DataParallelOptions {
  bool overlap = false;
};

// strategy.data_parallel.*, declared once (config/options_schema.hpp).
const OptionsSchema<DataParallelOptions>& data_parallel_schema() {
  static const auto schema = OptionsSchema<DataParallelOptions>().field(
      "overlap", &DataParallelOptions::overlap,
      "DDP's bucketed overlap: each bucket leaves as soon as the backward pass has its gradients (compressor "
      "none, granularity bucket, no grad_clip)");
  return schema;
}

DataParallelOptions data_parallel_options(const Config& config) {
  return data_parallel_schema().read(ComponentParameters(config, "strategy.data_parallel"));
}

// One bucket of the overlapped exchange: its tensors and their own collective.
struct Bucket {
  std::vector<std::size_t> tensors;
  std::unique_ptr<CompressedAllReduce> sync;
};

// Each refusal gives its own reason: the compressor, then the granularity.
void check_overlap_settings(const CompressorSelection& selection) {
  if (const std::string& name = selection.name; name != "none") {
    throw ConfigError(fmt::format(
        "strategy.data_parallel.overlap needs compressor.name = \"none\" (got \"{}\"): a compressor with error "
        "feedback would keep state from buckets sent before a step is cancelled for NaN/Inf", name));
  }
  if (const std::string_view granularity = to_string(selection.granularity); granularity != "bucket") {
    throw ConfigError(fmt::format(
        "strategy.data_parallel.overlap needs compressor.granularity = \"bucket\" (got \"{}\"): the overlap sends "
        "each bucket (compressor.bucket_mb) as soon as the backward pass has finished its gradients", granularity));
  }
}

// A step's exchanges: the whole model through compressor.*, or with overlap one per bucket.
std::vector<PlannedSync> data_parallel_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  std::vector<PlannedSync> syncs;
  if (!data_parallel_options(config).overlap) {
    syncs.push_back(planned_sync(config, tensors.size()));
    return syncs;
  }
  const CompressorSelection selection = compressor_selection(config);
  check_overlap_settings(selection);
  const Config whole = config.with(std::vector<ConfigSetting>{{"compressor.granularity", std::string("global")}});
  for (const std::vector<std::size_t>& members : bucket_partition(tensors, selection.bucket_bytes)) {
    PlannedSync sync = planned_sync(whole, members.size());
    sync.first = members.front();  // buckets are consecutive tensors
    syncs.push_back(std::move(sync));
  }
  return syncs;
}

class DataParallel final : public Strategy {
 public:
  explicit DataParallel(const StrategySetup& setup)
      : sync_(make_compressed_sync(setup)),
        optimizer_(make_optimizer(setup.config, {.execution = setup.execution, .tensors = setup.tensors})),
        aggregate_(setup.tensors, setup.execution.backend) {
    if (!data_parallel_options(setup.config).overlap) return;
    if (setup.gradients_clipped) {
      throw ConfigError("strategy.data_parallel.overlap needs the gradients unclipped (train.grad_clip = 0): clipping "
                        "by the global norm needs the whole gradient before any bucket leaves");
    }
    for (PlannedSync& planned : data_parallel_syncs(setup.config, setup.tensors)) {
      std::vector<std::size_t> members(planned.count);
      for (std::size_t i = 0; i < members.size(); ++i) members[i] = planned.first + i;
      buckets_.push_back({std::move(members), make_compressed_sync(setup, std::move(planned))});
    }
    ready_.assign(setup.tensors.size(), false);
  }

  std::string_view name() const override { return "data_parallel"; }

  void gradients_ready(std::uint64_t step, std::span<const std::size_t> tensors,
                       std::span<const std::span<const float>> grads) override {
    if (buckets_.empty()) return;
    for (const std::size_t t : tensors) ready_.at(t) = true;
    for (Bucket& bucket : buckets_) {
      const bool complete = std::ranges::all_of(bucket.tensors, [&](std::size_t t) { return ready_[t]; });
      if (complete && !bucket.sync->in_flight()) start(step, bucket, grads);
    }
  }

  void cancel_step() override {
    for (Bucket& bucket : buckets_) {
      if (bucket.sync->in_flight()) bucket.sync->finish(bucket_views(bucket, aggregate_.views()));
    }
    std::fill(ready_.begin(), ready_.end(), false);
    started_report_ = SyncReport{};
  }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    StrategyStepReport report;
    report.synchronized = true;
    if (buckets_.empty()) {
      report.sync = sync_->run(step, grads, aggregate_.views());
    } else {
      for (Bucket& bucket : buckets_) {
        if (!bucket.sync->in_flight()) start(step, bucket, grads);
      }
      report.sync = std::exchange(started_report_, SyncReport{});
      for (Bucket& bucket : buckets_) report.sync += bucket.sync->finish(bucket_views(bucket, aggregate_.views()));
      std::fill(ready_.begin(), ready_.end(), false);
    }
    MeasuredSpan update("compute", "update");
    optimizer_->step(params, aggregate_.const_views(), lr);
    report.update_s = update.stop();
    return report;
  }

  void save_state(StateDict& state, std::string_view prefix) const override {
    optimizer_->save_state(state, std::string(prefix) + "optimizer/");
    sync_->compressor().save_state(state, std::string(prefix) + "compressor/");
  }
  void load_state(const StateDict& state, std::string_view prefix) override {
    optimizer_->load_state(state, std::string(prefix) + "optimizer/");
    sync_->compressor().load_state(state, std::string(prefix) + "compressor/");
  }

 private:
  template <class Span>
  static std::vector<Span> bucket_views(const Bucket& bucket, std::span<const Span> all) {
    std::vector<Span> views;
    for (const std::size_t t : bucket.tensors) views.push_back(all[t]);
    return views;
  }

  // Starts one bucket's exchange; its share of the report goes to the step's.
  void start(std::uint64_t step, Bucket& bucket, std::span<const std::span<const float>> grads) {
    started_report_ += bucket.sync->start(step, bucket_views(bucket, grads));
  }

  std::unique_ptr<CompressedAllReduce> sync_;
  std::unique_ptr<Optimizer> optimizer_;
  TensorBuffers aggregate_;
  std::vector<Bucket> buckets_;  // overlap only
  std::vector<bool> ready_;      // per tensor: its gradient is final this step
  SyncReport started_report_;    // the starts' share of this step's report
};

}  // namespace

StrategyInfo data_parallel_strategy() {
  return {.name = "data_parallel",
          .description = "every step: gradients averaged through compressor.*, applied by optimizer.* "
                         "(compressor none = synchronous DDP)",
          .parameters = data_parallel_schema().keys(),
          .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
            return std::make_unique<DataParallel>(setup);
          },
          .syncs = data_parallel_syncs,
          .transport = {},  // compressor.name
          .examples = {{"dp_topk_ef", {"strategy.name=data_parallel", "optimizer.name=adamw", "compressor.name=topk",
                                          "compressor.topk.ratio=0.1", "compressor.topk.error_feedback=true"}},
                        {"dp_powersgd", {"strategy.name=data_parallel", "optimizer.name=sgd",
                                         "optimizer.sgd.momentum=0.9", "compressor.name=powersgd"}}}};
}

}  // namespace lowcomm::strategy

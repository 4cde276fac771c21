// `data_parallel`: every step, the local gradients go through the configured compressor
// (compressor.*) and the local optimizer (optimizer.*) applies their reconstructed mean. With
// compressor `none` this is synchronous DDP: every rank applies the same exact mean.
#include <memory>

#include "builtins.hpp"
#include "compressed_sync.hpp"
#include "tensor_buffers.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm::strategy {

namespace {

class DataParallel final : public Strategy {
 public:
  explicit DataParallel(const StrategySetup& setup)
      : sync_(make_compressed_sync(setup)),
        optimizer_(make_optimizer(setup.config)),
        aggregate_(setup.tensors) {}

  std::string_view name() const override { return "data_parallel"; }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    StrategyStepReport report;
    report.synchronized = true;
    report.sync = sync_->run(step, grads, aggregate_.views());
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
  std::unique_ptr<CompressedAllReduce> sync_;
  std::unique_ptr<Optimizer> optimizer_;
  TensorBuffers aggregate_;
};

}  // namespace

StrategyInfo data_parallel_strategy() {
  return {.name = "data_parallel",
          .description = "every step: gradients averaged through compressor.*, applied by optimizer.* "
                         "(compressor none = synchronous DDP)",
          .parameters = {},
          .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
            return std::make_unique<DataParallel>(setup);
          }};
}

}  // namespace lowcomm::strategy

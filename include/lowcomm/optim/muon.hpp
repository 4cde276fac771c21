#pragma once
// Muon (Keller Jordan, github.com/KellerJordan/Muon, `MuonWithAuxAdam`): momentum whose update of
// each hidden 2-D weight is orthogonalised, AdamW for every other tensor. Per step, with lr the
// schedule's learning rate:
//   a 2-D weight W (rows × cols, as nn.Linear stores it), momentum m from 0:
//     m ← β·m + (1 − β)·g
//     u ← β·m + (1 − β)·g   (Nesterov; without it u = m)
//     u ← NewtonSchulz5(u) · sqrt(max(1, rows/cols))     (optim/newton_schulz.hpp)
//     W ← W·(1 − lr·wd) − lr·u
//   every other tensor (embeddings, the head, biases, gains; and the 2-D tensors whose names match
//   adamw_tensors): AdamW (optim/adamw.hpp) at lr·adamw_lr_scale with its own betas, eps and
//   weight decay (MuonWithAuxAdam's defaults: lr 3e-4 beside Muon's 0.02, betas (0.9, 0.95),
//   eps 1e-10, no weight decay).
// The reference iterates Newton–Schulz in bf16; lowcomm in fp32 (docs/optimizers.md says what
// that changes).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/optim/adamw.hpp"
#include "lowcomm/optim/optimizer.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm {

struct MuonOptions {
  double momentum = 0.95;            // [0, 1)
  bool nesterov = true;
  std::int64_t ns_steps = 5;         // Newton–Schulz iterations, ≥ 0
  double weight_decay = 0.0;         // ≥ 0, decoupled, on the orthogonalised weights
  double adamw_lr_scale = 0.015;     // > 0: the AdamW tensors' lr over Muon's (3e-4 / 0.02)
  double adamw_beta1 = 0.9;
  double adamw_beta2 = 0.95;
  double adamw_eps = 1e-10;
  double adamw_weight_decay = 0.0;
  // Comma-separated name patterns (shell globs) of 2-D tensors that take AdamW, not Muon: the
  // reference app's embeddings (wte, which is also the tied head, and wpe), and by name any
  // model's embeddings and head.
  std::string adamw_tensors = "wte,wpe,*embed*,*head*";
  // Throws ConfigError naming "<key_prefix>.<parameter>" for a value out of range.
  void validate(std::string_view key_prefix = "optimizer.muon") const;
};

class Muon final : public Optimizer {
 public:
  // Throws ConfigError when setup.tensors is empty (Muon chooses by shape and name).
  Muon(MuonOptions options, const OptimizerSetup& setup);
  std::string_view name() const override { return "muon"; }
  void step(std::span<const std::span<float>> params,
            std::span<const std::span<const float>> grads, double lr) override;
  std::int64_t steps() const override { return steps_; }
  void save_state(StateDict& state, std::string_view prefix) const override;
  void load_state(const StateDict& state, std::string_view prefix) override;

  // Whether tensor i of the setup's list is orthogonalised (else AdamW's).
  bool orthogonalised(std::size_t i) const;

 private:
  MuonOptions options_;
  kernels::Backend backend_;
  std::vector<TensorInfo> tensors_;
  Sizes sizes_;                            // of tensors_, which every step's tensors must have
  std::vector<std::size_t> muon_, adamw_;  // indices into tensors_
  AdamW adamw_optimizer_;
  std::int64_t steps_ = 0;
  Buffers momentum_;                        // one per Muon tensor
  kernels::FloatBuffer update_, scratch_;   // the largest Muon tensor's update and Newton–Schulz memory
};

}  // namespace lowcomm

#pragma once
// Where and how a component computes: which kernel backend runs its hot loops (and so in which
// memory its buffers live: kernels/memory.hpp), and in which precision the model multiplies. It is
// chosen once, from the configuration's compute.backend (config/compute_config.hpp) and
// train.precision, and travels in the contexts the components already receive: UnitContext for
// compressors, StrategySetup for strategies and their optimizers, the model's constructor. No call
// site names a backend.
#include <span>
#include <string_view>

#include "lowcomm/kernels/backend_name.hpp"
#include "lowcomm/kernels/precision.hpp"

namespace lowcomm {

struct ExecutionContext {
  // The default is the optimised CPU kernels; Reference runs the plain loops that define every
  // kernel's result (slow: for checking a run against the ground truth).
  kernels::Backend backend = kernels::Backend::Cpu;
  // The precision of the model's matrix products (train.precision; kernels/precision.hpp): fp32,
  // or bf16 operands with fp32 accumulation. The compressors, strategies and optimizers compute
  // in fp32 either way.
  kernels::Precision precision = kernels::Precision::Fp32;
};

// The backends this build computes with, in the order `lowcomm info` lists them.
std::span<const kernels::Backend> available_backends();

// The available backend called `name` (to_string's spelling). Throws ConfigError naming the
// available ones otherwise.
kernels::Backend backend_named(std::string_view name);

}  // namespace lowcomm

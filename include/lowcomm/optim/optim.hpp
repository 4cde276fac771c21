#pragma once
// The local optimizers, learning-rate schedules and gradient clipping (docs/optimizers.md).
#include "lowcomm/optim/adamw.hpp"
#include "lowcomm/optim/clip.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/optim/optimizer.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/optim/sgd.hpp"
#include "lowcomm/optim/signum.hpp"

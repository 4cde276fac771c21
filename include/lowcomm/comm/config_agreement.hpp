#pragma once
// Ranks started with different files or --set options would run a different experiment than the
// log says, silently: every command that runs on several ranks checks that they agree first.
#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm {

// Every rank must hold the same resolved configuration. Collective over `control`: compares
// hash() and, where they differ, throws ConfigError on every rank naming the ranks that differ
// from rank 0.
void require_identical_on_all_ranks(const Config& config, const ControlChannel& control);

}  // namespace lowcomm

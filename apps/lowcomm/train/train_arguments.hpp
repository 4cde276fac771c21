#pragma once
// The command-line options of `lowcomm train` (train_command.cpp declares them to CLI11).
#include <cstdint>
#include <optional>
#include <string>

#include "common/run_config.hpp"

namespace lowcomm::cli {

struct TrainArguments {
  ConfigArguments config;
  std::string out = "runs/train";
  bool resume = false;
  std::optional<std::int64_t> resume_from;  // implies resume
  bool force = false;
  std::string record_trace;
  std::string timeline;
};

}  // namespace lowcomm::cli

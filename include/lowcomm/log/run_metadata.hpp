#pragma once
// What a run log records about the run as a whole: written once, as root attributes, when the log
// is created (see docs/log-format.md). Plain data, so callers can gather it on rank 0 however they
// like; for_this_process() fills what the process itself can know.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lowcomm {

struct RunMetadata {
  std::string config_text;  // the resolved config (TOML)
  int world_size = 1;
  std::vector<std::string> hosts;  // one per rank
  std::uint64_t seed = 0;
  // More string attributes (strategy, compressor, ...); a key may not reuse a name the log
  // writes itself (format_version, config, hosts, ...).
  std::map<std::string, std::string> extra;

  // Fills git revision and version (from build_info), the start time (ISO-8601 UTC, now) and the
  // Slurm ids from the environment where set: SLURM_JOB_ID, SLURM_ARRAY_JOB_ID,
  // SLURM_ARRAY_TASK_ID, SLURM_RESTART_COUNT.
  static RunMetadata for_this_process(std::string config_text, int world_size,
                                      std::vector<std::string> hosts, std::uint64_t seed);

  std::string git_revision, lowcomm_version, start_time;
  std::optional<std::string> slurm_job_id, slurm_array_job_id, slurm_array_task_id,
      slurm_restart_count;
};

}  // namespace lowcomm

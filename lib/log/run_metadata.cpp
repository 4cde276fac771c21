#include "lowcomm/log/run_metadata.hpp"

#include <cstdlib>
#include <ctime>

#include "lowcomm/build_info.hpp"

namespace lowcomm {

namespace {

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string iso8601_utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[sizeof "2000-01-01T00:00:00Z"];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

RunMetadata RunMetadata::for_this_process(std::string config_text, int world_size,
                                          std::vector<std::string> hosts, std::uint64_t seed) {
  RunMetadata metadata;
  metadata.config_text = std::move(config_text);
  metadata.world_size = world_size;
  metadata.hosts = std::move(hosts);
  metadata.seed = seed;
  metadata.git_revision = build_info().git_revision;
  metadata.lowcomm_version = build_info().version;
  metadata.start_time = iso8601_utc_now();
  metadata.slurm_job_id = environment("SLURM_JOB_ID");
  metadata.slurm_array_job_id = environment("SLURM_ARRAY_JOB_ID");
  metadata.slurm_array_task_id = environment("SLURM_ARRAY_TASK_ID");
  metadata.slurm_restart_count = environment("SLURM_RESTART_COUNT");
  return metadata;
}

}  // namespace lowcomm

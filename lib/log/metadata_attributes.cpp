#include "metadata_attributes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "hdf5_attributes.hpp"
#include "hdf5_handle.hpp"

namespace lowcomm::log_detail {

namespace {

constexpr std::array<std::string_view, 14> kReservedNames = {
    "format_version", "lowcomm_version",    "git_revision",        "config",
    "world_size",     "hosts",              "seed",                "start_time",
    "slurm_job_id",   "slurm_array_job_id", "slurm_array_task_id", "slurm_restart_count",
    "resume_count",   "latest_config"};

void write_optional(hid_t file, const std::string& name, const std::optional<std::string>& value,
                    const std::filesystem::path& path) {
  if (value) write_string_attribute(file, name, *value, path);
}

}  // namespace

void write_metadata_attributes(hid_t file, const RunMetadata& metadata,
                               const std::filesystem::path& path) {
  for (const auto& [name, value] : metadata.extra) {
    if (std::ranges::find(kReservedNames, name) != kReservedNames.end()) {
      throw_log_error(path, fmt::format("RunMetadata::extra key '{}' is an attribute the log "
                                        "writes itself",
                                        name),
                      "Rename the key");
    }
  }
  write_int_attribute(file, "format_version", kLogFormatVersion, path);
  write_string_attribute(file, "lowcomm_version", metadata.lowcomm_version, path);
  write_string_attribute(file, "git_revision", metadata.git_revision, path);
  write_string_attribute(file, "config", metadata.config_text, path);
  write_int_attribute(file, "world_size", metadata.world_size, path);
  write_strings_attribute(file, "hosts", metadata.hosts, path);
  write_uint_attribute(file, "seed", metadata.seed, path);
  write_string_attribute(file, "start_time", metadata.start_time, path);
  write_optional(file, "slurm_job_id", metadata.slurm_job_id, path);
  write_optional(file, "slurm_array_job_id", metadata.slurm_array_job_id, path);
  write_optional(file, "slurm_array_task_id", metadata.slurm_array_task_id, path);
  write_optional(file, "slurm_restart_count", metadata.slurm_restart_count, path);
  write_int_attribute(file, "resume_count", 0, path);
  for (const auto& [name, value] : metadata.extra) write_string_attribute(file, name, value, path);
}

void check_format_version(hid_t file, const std::filesystem::path& path) {
  const std::optional<std::int64_t> version = read_int_attribute(file, "format_version", path);
  if (!version) {
    throw_log_error(path, "the file has no format_version attribute, so it is not a lowcomm run "
                          "log",
                    "Give the path of a log that lowcomm created");
  }
  if (*version < kOldestAppendableLogFormat || *version > kLogFormatVersion) {
    throw_log_error(path,
                    fmt::format("the log has format version {}, this lowcomm writes version {} and appends to "
                                "versions {} to {}",
                                *version, kLogFormatVersion, kOldestAppendableLogFormat, kLogFormatVersion),
                    "Resume the run with the lowcomm version that started it, or start a new log");
  }
}

void record_resume(hid_t file, const std::filesystem::path& path, std::string_view latest_config) {
  const std::int64_t resumes = read_int_attribute(file, "resume_count", path).value_or(0);
  write_int_attribute(file, "resume_count", resumes + 1, path);
  if (!latest_config.empty()) write_string_attribute(file, "latest_config", latest_config, path);
  if (const char* restarts = std::getenv("SLURM_RESTART_COUNT")) {
    write_string_attribute(file, "slurm_restart_count", restarts, path);
  }
}

}  // namespace lowcomm::log_detail

#pragma once
// The run-level part of the layout: RunMetadata as root attributes, the format version, and what
// a resume records. Attributes must all be written before SWMR writing starts.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "lowcomm/log/run_metadata.hpp"

namespace lowcomm::log_detail {

// Bumped when a reader of the previous version would misread a file (docs/log-format.md).
// 2 added the attribute `method` (a run from an experiment file: its method's name); a version 1
// log, which lacks it, is still appended to as it is.
inline constexpr std::int64_t kLogFormatVersion = 2;
inline constexpr std::int64_t kOldestAppendableLogFormat = 1;

// Writes format_version, resume_count = 0 and every RunMetadata field; throws LogError when an
// `extra` key would overwrite one of those.
void write_metadata_attributes(hid_t file, const RunMetadata& metadata,
                               const std::filesystem::path& path);

// Throws LogError unless the file carries the format version this code writes.
void check_format_version(hid_t file, const std::filesystem::path& path);

// Increments resume_count, records the resuming job's resolved configuration as latest_config
// (unless empty) and, when SLURM_RESTART_COUNT is set, it as slurm_restart_count.
void record_resume(hid_t file, const std::filesystem::path& path, std::string_view latest_config);

}  // namespace lowcomm::log_detail

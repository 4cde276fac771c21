#pragma once
// An HDF5 file written whole or not at all (checkpoints, plan files): `write` fills a new file
// at FILE.partial, which is renamed to FILE once closed, so a file under its final name is always
// complete, even after a kill mid-write. The file closes strongly: a write that fails on a full
// disk leaves no group or dataset open behind it (HDF5 would otherwise try, and crash, to close
// them at the process's exit). On any failure the partial file is removed and the error rethrown.
#include <hdf5.h>

#include <filesystem>
#include <functional>
#include <string_view>

#include "hdf5_handle.hpp"

namespace lowcomm::log_detail {

// `kind` names the file in messages ("checkpoint", "plan file"); `write` gets the open file and
// how to report a failure in it.
void write_whole_file(const std::filesystem::path& path, std::string_view kind,
                      const std::function<void(hid_t file, const ReportedFile& reported)>& write);

}  // namespace lowcomm::log_detail

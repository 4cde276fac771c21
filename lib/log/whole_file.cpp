#include "whole_file.hpp"

#include <fmt/format.h>

#include <system_error>

#include "lowcomm/error.hpp"

namespace lowcomm::log_detail {

void write_whole_file(const std::filesystem::path& path, std::string_view kind,
                      const std::function<void(hid_t file, const ReportedFile& reported)>& write) {
  const SilenceHdf5Errors silence;
  std::filesystem::path partial = path;
  partial += ".partial";
  const ReportedFile file(partial, kind);
  try {
    const Hdf5Id access(check(H5Pcreate(H5P_FILE_ACCESS), file, "cannot create the file"), H5Pclose);
    check(H5Pset_fclose_degree(access.get(), H5F_CLOSE_STRONG), file, "cannot create the file");
    Hdf5Id h5(check(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), file,
                    "cannot create the file", "check that its folder exists and is writable"),
              H5Fclose);
    write(h5.get(), file);
    check(h5.close(), file, "cannot finish writing the file", "check the free disk space");
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw;
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) {
    throw LogError(fmt::format("{} {}: cannot rename {} to it: {}", kind, path.string(), partial.string(),
                               error.message()));
  }
}

}  // namespace lowcomm::log_detail

#include "hdf5_handle.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm::log_detail {

namespace {

herr_t keep_innermost(unsigned /*depth*/, const H5E_error2_t* error, void* cause) {
  // Walking downward from the API call, the last entry visited is the deepest: the cause.
  *static_cast<std::string*>(cause) = error->desc != nullptr ? error->desc : "";
  return 0;
}

}  // namespace

std::string hdf5_error_cause() {
  std::string cause;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &cause);
  return cause;
}

void throw_log_error(const ReportedFile& file, std::string_view what,
                     std::string_view advice) {
  const std::string cause = hdf5_error_cause();
  H5Eclear2(H5E_DEFAULT);
  std::string message = fmt::format("{} {}: {}", file.kind, file.path.string(), what);
  if (!cause.empty()) message += fmt::format(" (HDF5: {})", cause);
  if (!advice.empty()) message += fmt::format(". {}", advice);
  throw LogError(message);
}

}  // namespace lowcomm::log_detail

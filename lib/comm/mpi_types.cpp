#include "lowcomm/comm/mpi_types.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm {

void check_mpi(int status, std::string_view what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw CommError(fmt::format("{} failed: {}", what, std::string_view(text, static_cast<std::size_t>(length))));
}

}  // namespace lowcomm

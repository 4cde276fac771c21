#include "lowcomm/comm/host_names.hpp"

#include <array>

namespace lowcomm {

std::vector<std::string> gather_host_names(const ControlChannel& control) {
  std::array<char, MPI_MAX_PROCESSOR_NAME + 1> mine{};  // one more: always NUL-terminated
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  std::vector<std::string> names;
  for (const auto& name : control.all_gather(mine)) names.emplace_back(name.data());
  return names;
}

}  // namespace lowcomm

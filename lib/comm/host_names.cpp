#include "lowcomm/comm/host_names.hpp"

#include <array>

namespace lowcomm {

std::vector<std::string> gather_host_names(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::array<char, MPI_MAX_PROCESSOR_NAME> mine{};
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  std::vector<char> all(static_cast<std::size_t>(size) * mine.size());
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(),
                static_cast<int>(mine.size()), MPI_CHAR, comm);
  std::vector<std::string> names;
  for (int w = 0; w < size; ++w) names.emplace_back(all.data() + static_cast<std::size_t>(w) * mine.size());
  return names;
}

}  // namespace lowcomm

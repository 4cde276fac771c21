// Averages a vector over all ranks through an installed lowcomm and checks the result and the
// bytes the consumer scenario's ring all-reduce charges.
#include <lowcomm/lowcomm.hpp>

#include <cstdio>
#include <vector>

int main() {
  MPI_Init(nullptr, nullptr);
  int status = 0;
  {
    lowcomm::Communicator comm(MPI_COMM_WORLD,
                               {.network = lowcomm::NetworkModel(lowcomm::network_scenario("consumer").link),
                                .mode = lowcomm::NetworkMode::Simulate});
    std::vector<double> v(1000, comm.rank() + 1.0);
    comm.all_reduce(std::span<double>(v), lowcomm::ReduceOp::Average);
    const double expected = (comm.size() + 1) / 2.0;
    const auto expected_bytes = static_cast<unsigned long long>(2 * (comm.size() - 1) * 8000 / comm.size());
    if (v[999] != expected || comm.totals().bytes_sent != expected_bytes) status = 1;
    if (comm.rank() == 0) {
      std::printf("consumer: lowcomm %s, mean %g (expected %g), sent %llu B (expected %llu), modelled %.3f s\n",
                  std::string(lowcomm::build_info().version).c_str(), v[999], expected,
                  static_cast<unsigned long long>(comm.totals().bytes_sent), expected_bytes,
                  comm.totals().modelled_s);
    }
  }
  MPI_Finalize();
  return status;
}

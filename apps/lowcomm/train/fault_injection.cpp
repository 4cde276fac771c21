#include "fault_injection.hpp"

#include <csignal>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace lowcomm::cli {

void fault_point(std::string_view point, std::int64_t step, int rank) {
  const char* fault = std::getenv("LOWCOMM_TEST_FAULT");
  if (fault == nullptr || fmt::format("{}@{}", point, step) != fault) return;
  const char* chosen = std::getenv("LOWCOMM_TEST_FAULT_RANK");
  if (rank != (chosen ? std::atoi(chosen) : 0)) return;
  std::fprintf(stderr, "lowcomm: LOWCOMM_TEST_FAULT: rank %d kills itself at %s of step %lld\n", rank,
               std::string(point).c_str(), static_cast<long long>(step));
  std::fflush(stderr);
  std::raise(SIGKILL);
}

std::optional<std::uintmax_t> test_free_bytes() {
  const char* bytes = std::getenv("LOWCOMM_TEST_FREE_BYTES");
  if (bytes == nullptr) return std::nullopt;
  return std::strtoumax(bytes, nullptr, 10);
}

}  // namespace lowcomm::cli

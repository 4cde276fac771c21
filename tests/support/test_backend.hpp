#pragma once
// The backend a test computes on: LOWCOMM_TEST_BACKEND names it (the Kokkos and CUDA builds run
// some MPI tests once more with "kokkos" or "cuda", lowcomm_add_backend_test in
// cmake/LowcommTesting.cmake), else the default; and the transport its collectives go through:
// LOWCOMM_TEST_TRANSPORT ("nccl" in a CUDA build with NCCL), else MPI. A CUDA build on a machine
// without a GPU skips such a test, saying why, rather than failing it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/execution_context.hpp"

namespace lowcomm::test {

inline ExecutionContext test_execution() {
  const char* name = std::getenv("LOWCOMM_TEST_BACKEND");
  return name ? ExecutionContext{.backend = backend_named(name)} : ExecutionContext{};
}

// `base` with LOWCOMM_TEST_TRANSPORT's transport when it is set.
inline CommunicatorOptions test_communicator_options(CommunicatorOptions base = {}) {
  if (const char* name = std::getenv("LOWCOMM_TEST_TRANSPORT")) base.transport = parse_transport(name);
  return base;
}

// Why LOWCOMM_TEST_BACKEND cannot compute in this process ("" when it can, or is unset). A name
// not in this build is left to backend_named() to report.
inline std::string test_backend_unavailable() {
  const char* name = std::getenv("LOWCOMM_TEST_BACKEND");
  if (name == nullptr) return "";
  for (const kernels::Backend backend : available_backends()) {
    if (kernels::to_string(backend) == name) return kernels::unavailable_reason(backend);
  }
  return "";
}

// Skips every test of the program where the test backend cannot run: register it once, with
// `testing::AddGlobalTestEnvironment(new lowcomm::test::SkipWithoutTestBackend)` from a static
// initialiser of the test file.
class SkipWithoutTestBackend : public ::testing::Environment {
 public:
  void SetUp() override {
    if (const std::string reason = test_backend_unavailable(); !reason.empty()) GTEST_SKIP() << reason;
  }
};

}  // namespace lowcomm::test

#pragma once
// Test-only fault injection, for the tests of what survives a crash (docs/training.md,
// "What survives a fault"): with LOWCOMM_TEST_FAULT=<point>@<step> in its environment, rank 0
// (or rank LOWCOMM_TEST_FAULT_RANK) kills itself with SIGKILL, as the OOM killer or a lost node
// would, when the checkpoint commit of that step reaches that point. The points, in order:
//   log-flushed          every log row before the step is on disk
//   rank-files-written   every rank has written its checkpoint file
//   latest-committed     checkpoints/latest names the step; older step folders still exist
// Unset (always, outside the tests), it costs one getenv per commit stage.
// LOWCOMM_TEST_FREE_BYTES=<n> makes the checkpoint's free-space check see n bytes free, a full
// disk without filling one.
#include <cstdint>
#include <optional>
#include <string_view>

namespace lowcomm::cli {

void fault_point(std::string_view point, std::int64_t step, int rank);
std::optional<std::uintmax_t> test_free_bytes();

}  // namespace lowcomm::cli

#include "common/heap_policy.hpp"

#include <climits>
#include <cstdlib>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lowcomm::cli {

void keep_freed_memory() {
#if defined(__GLIBC__)
  const char* setting = std::getenv("LOWCOMM_KEEP_FREED_MEMORY");
  if (setting != nullptr && std::string_view(setting) == "0") return;
  mallopt(M_MMAP_MAX, 0);               // every allocation from the heap ...
  mallopt(M_TRIM_THRESHOLD, INT_MAX);   // ... which keeps what is freed at its top
#endif
}

}  // namespace lowcomm::cli

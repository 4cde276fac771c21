#pragma once
// How the process keeps the memory it frees (glibc's malloc), set once at start.

namespace lowcomm::cli {

// Freed memory stays in the process: no allocation is served by its own mmap, and the heap's top
// is not given back. Why: glibc serves an allocation above 32 MB with mmap and unmaps it on free,
// so a buffer allocated and freed on every call is page-faulted afresh each time. Open MPI's
// all-reduce does that with its temporary buffer: on 2 ranks of this project's machine a 151 MB
// all-reduce ran at 0.40 GB/s instead of 3.5 (docs/benchmarks.md). A training step allocates the
// same sizes again and again, so the cost is a resident size that stays at its peak.
// LOWCOMM_KEEP_FREED_MEMORY=0 leaves glibc's defaults (for comparing); other C libraries are left
// alone.
void keep_freed_memory();

}  // namespace lowcomm::cli

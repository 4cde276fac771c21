#pragma once
// Workspace in a backend's memory for the dispatch's composite kernels (the DCT then top-k of
// dct_topk.cpp on an accelerator): kept per thread between calls and grown to the largest size
// asked, so that on CUDA the intermediate stays in managed memory the kernels use in place,
// instead of crossing to the host and back, and no call pays for an allocation after the first.
#include <cstddef>
#include <span>

#include "lowcomm/kernels/backend.hpp"

namespace lowcomm::kernels::detail {

// `count` floats of `backend`'s memory, this thread's, holding whatever its last user left: valid
// until the next call on this thread. The buffer keeps the largest size asked (on CUDA, managed
// memory of the largest tensor a composite kernel has seen) until the thread ends.
std::span<float> backend_scratch(Backend backend, std::size_t count);

}  // namespace lowcomm::kernels::detail

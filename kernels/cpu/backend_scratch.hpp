#pragma once
// Workspace in a backend's memory for the dispatch's composite kernels (the DCT then top-k of
// dct_topk.cpp on an accelerator): kept per thread between calls and grown to the largest size
// asked, so that on CUDA the intermediate stays in managed memory the kernels use in place,
// instead of crossing to the host and back, and no call pays for an allocation after the first.
#include <cstddef>
#include <span>

#include "lowcomm/kernels/backend.hpp"

namespace lowcomm::kernels::detail {

// `count` floats of `backend`'s memory, this thread's slot `slot` (0 or 1), holding whatever the
// last user of the slot left: valid until the next call for the same slot on this thread.
std::span<float> backend_scratch(Backend backend, std::size_t count, int slot);

}  // namespace lowcomm::kernels::detail

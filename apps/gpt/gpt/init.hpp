#pragma once
// GPT-2's initialisation, as nanoGPT: every weight matrix and both embeddings ~ N(0, 0.02²), the
// residual projections (attn.c_proj.weight, mlp.c_proj.weight) ~ N(0, (0.02/sqrt(2L))²) so the
// residual stream's variance does not grow with depth, biases 0, LayerNorm weights 1, biases 0.
//
// The normals come from std::mt19937_64(seed) through our own Box-Muller transform (in double,
// rounded to float), tensors in layout order, elements in order: std::normal_distribution's
// algorithm is up to the standard library, so this is what makes a seed give the same model
// everywhere. It does not reproduce PyTorch's random stream.
#include <cstdint>
#include <span>

#include "gpt/parameters.hpp"

namespace lowcomm::gpt {

void initialize_parameters(const ParameterLayout& layout, std::int64_t layers, std::uint64_t seed,
                           std::span<float> parameters);

}  // namespace lowcomm::gpt

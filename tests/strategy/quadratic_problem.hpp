#pragma once
// A small training problem whose gradients every test can compute by hand: rank w's loss at step
// s is ½·Σ d_w ⊙ (x − c_{w,s})², so its gradient is d_w ⊙ (x − c_{w,s}). The mean over ranks is
// the gradient of the loss over all ranks' batches, which is what data-parallel training must
// follow. Tensors include a prime dimension, a 1-D tensor and a scalar.
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lowcomm/compress/unit.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::test {

inline const std::vector<TensorInfo> kModel = {
    {"weight", {8, 12}}, {"prime", {13, 5}}, {"bias", {12}}, {"scale", {}}};

inline std::size_t model_size() {
  std::size_t n = 0;
  for (const TensorInfo& t : kModel) n += static_cast<std::size_t>(t.numel());
  return n;
}

inline std::vector<float> normals(std::uint64_t seed, std::size_t n, float mean, float stddev) {
  std::mt19937_64 random(seed);
  std::normal_distribution<float> normal(mean, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = normal(random);
  return v;
}

inline std::vector<float> initial_params() { return normals(7, model_size(), 0.0f, 1.0f); }

// d_w: positive curvatures, different per rank.
inline std::vector<float> curvature(int rank) {
  std::vector<float> d = normals(100 + static_cast<std::uint64_t>(rank), model_size(), 0.0f, 0.3f);
  for (float& x : d) x = 1.0f + std::abs(x);
  return d;
}

inline std::vector<float> centre(int rank, std::uint64_t step) {
  return normals(1000 * static_cast<std::uint64_t>(rank) + step + 1, model_size(), 0.5f, 1.0f);
}

inline std::vector<float> gradient(int rank, std::uint64_t step, std::span<const float> x) {
  const std::vector<float> d = curvature(rank), c = centre(rank, step);
  std::vector<float> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) g[i] = d[i] * (x[i] - c[i]);
  return g;
}

// Per-tensor views of a flat vector, in kModel's order.
template <class T>
std::vector<std::span<T>> views(std::span<T> flat) {
  std::vector<std::span<T>> out;
  std::size_t offset = 0;
  for (const TensorInfo& t : kModel) {
    out.push_back(flat.subspan(offset, static_cast<std::size_t>(t.numel())));
    offset += static_cast<std::size_t>(t.numel());
  }
  return out;
}

inline Config strategy_config(const std::vector<std::string>& overrides) {
  ConfigSchema schema;
  add_strategy_keys(schema, "sgd");
  return Config::defaults(schema, overrides);
}

}  // namespace lowcomm::test

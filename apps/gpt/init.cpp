#include "gpt/init.hpp"

#include <cmath>
#include <numbers>
#include <random>
#include <string_view>

namespace lowcomm::gpt {
namespace {

// Standard normals by Box-Muller, both values of each pair used, in order.
class NormalStream {
 public:
  explicit NormalStream(std::uint64_t seed) : engine_(seed) {}
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    // u1 in (0, 1] (never 0, so the log is finite), u2 in [0, 1), each from 53 random bits.
    const double u1 = (static_cast<double>(engine_() >> 11) + 1.0) * 0x1p-53;
    const double u2 = static_cast<double>(engine_() >> 11) * 0x1p-53;
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

void initialize_parameters(const ParameterLayout& layout, std::int64_t layers, std::uint64_t seed,
                           std::span<float> parameters) {
  NormalStream normal(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(layers));
  const auto spans = layout.spans(parameters);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const std::string_view name = layout.tensors()[i].name;
    std::span<float> tensor = spans[i];
    if (name.starts_with("ln_") || name.find(".ln_") != std::string_view::npos) {
      std::fill(tensor.begin(), tensor.end(), ends_with(name, ".weight") ? 1.0f : 0.0f);
    } else if (ends_with(name, ".bias")) {
      std::fill(tensor.begin(), tensor.end(), 0.0f);
    } else {
      const double std = ends_with(name, "c_proj.weight") ? residual_std : 0.02;
      for (float& x : tensor) x = static_cast<float>(std * normal.next());
    }
  }
}

}  // namespace lowcomm::gpt

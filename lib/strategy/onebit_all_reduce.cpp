#include "onebit_all_reduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::strategy {

namespace {

// +1 for x ≥ 0 (and NaN), −1 for x < 0: DeepSpeed's sign().add_(1).bool().
bool sign_bit(float x) { return !(x < 0.0f); }
float signed_one(bool bit) { return bit ? 1.0f : -1.0f; }

// ‖x‖₂/√count, the sum of squares in double.
float rms_scale(std::span<const float> x, std::uint64_t count) {
  double squares = 0.0;
  for (const float v : x) squares += static_cast<double>(v) * v;
  return static_cast<float>(std::sqrt(squares) / std::sqrt(static_cast<double>(count)));
}

void pack_signs(std::span<const float> values, std::span<std::uint8_t> bits) {
  std::ranges::fill(bits, std::uint8_t{0});
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (sign_bit(values[i])) bits[i / 8] = static_cast<std::uint8_t>(bits[i / 8] | (1u << (i % 8)));
  }
}
bool bit_at(std::span<const std::uint8_t> bits, std::size_t i) { return ((bits[i / 8] >> (i % 8)) & 1u) != 0; }

void load_exact(const StateDict& state, const std::string& key, std::vector<float>& into, std::size_t size) {
  const std::vector<float>& values = state.floats(key);
  if (values.size() != size) {
    throw Error(fmt::format("state '{}' holds {} values; this model and world size need {} (1-bit exchange)", key,
                            values.size(), size));
  }
  into = values;
}

}  // namespace

std::uint64_t OnebitAllReduce::padded_size(std::uint64_t n, int world_size) {
  const auto w = static_cast<std::uint64_t>(world_size);
  const std::uint64_t multiple = w * std::lcm(w, std::uint64_t{8});
  return (n + multiple - 1) / multiple * multiple;
}

StepTraffic OnebitAllReduce::price(std::uint64_t n, int world_size, const CommunicatorOptions& options) {
  const std::uint64_t chunk_bytes = padded_size(n, world_size) / 8 / static_cast<std::uint64_t>(world_size);
  const auto w = static_cast<std::size_t>(world_size);
  StepTraffic traffic;
  traffic.bytes_sent.assign(w, 0);
  traffic.bytes_received.assign(w, 0);
  const auto add = [&](const CollectiveCost& cost) {
    ++traffic.calls;
    traffic.modelled_s += cost.seconds;
    for (std::size_t r = 0; r < w; ++r) {
      traffic.bytes_sent[r] += cost.bytes_sent[r];
      traffic.bytes_received[r] += cost.bytes_received[r];
    }
  };
  const std::vector<std::uint64_t> scale(w, sizeof(float)), signs(w, chunk_bytes);
  add(options.network.all_to_all(world_size, chunk_bytes));
  add(options.network.all_gather(options.all_gather_algorithm, scale));
  add(options.network.all_gather(options.all_gather_algorithm, signs));
  add(options.network.all_gather(options.all_gather_algorithm, scale));
  traffic.payload_bytes = (w - 1) * chunk_bytes + sizeof(float) + chunk_bytes + sizeof(float);
  return traffic;
}

OnebitAllReduce::OnebitAllReduce(Communicator& comm, std::size_t n)
    : comm_(comm), n_(n), padded_(static_cast<std::size_t>(padded_size(n, comm.size()))),
      chunk_(padded_ / static_cast<std::size_t>(comm.size())) {}

std::uint64_t OnebitAllReduce::run(std::span<float> values) {
  if (values.size() != n_) throw Error(fmt::format("1-bit exchange: {} values for {}", values.size(), n_));
  const int w = comm_.size();
  if (!has_errors_) {
    worker_error_.assign(padded_, 0.0f);
    server_error_.assign(chunk_, 0.0f);
    has_errors_ = true;
  }
  const std::size_t chunk_bytes = chunk_ / 8;
  buffer_.resize(padded_);
  compensated_.resize(chunk_);
  scales_.resize(static_cast<std::size_t>(w));
  signs_.resize(padded_ / 8);
  chunks_.resize(padded_ / 8);
  server_signs_.resize(chunk_bytes);
  all_signs_.resize(padded_ / 8);

  MeasuredSpan worker("compute", "codec");
  for (std::size_t i = 0; i < padded_; ++i) buffer_[i] = (i < n_ ? values[i] : 0.0f) + worker_error_[i];
  const float worker_scale = rms_scale(buffer_, padded_);
  for (std::size_t i = 0; i < padded_; ++i) worker_error_[i] = buffer_[i] - worker_scale * signed_one(sign_bit(buffer_[i]));
  pack_signs(buffer_, signs_);
  worker.stop();

  comm_.all_to_all(std::span<const std::uint8_t>(signs_), std::span<std::uint8_t>(chunks_));
  comm_.all_gather(std::span<const float>(&worker_scale, 1), std::span<float>(scales_));

  MeasuredSpan server("compute", "codec");
  const float inverse_w = 1.0f / static_cast<float>(w);
  for (std::size_t c = 0; c < chunk_; ++c) {
    float sum = 0.0f;
    for (int j = 0; j < w; ++j) {
      const std::span<const std::uint8_t> from(chunks_.data() + static_cast<std::size_t>(j) * chunk_bytes, chunk_bytes);
      sum += signed_one(bit_at(from, c)) * (scales_[static_cast<std::size_t>(j)] * inverse_w);
    }
    compensated_[c] = sum + server_error_[c];
  }
  const float server_scale = rms_scale(compensated_, chunk_);
  for (std::size_t c = 0; c < chunk_; ++c) {
    server_error_[c] = compensated_[c] - server_scale * signed_one(sign_bit(compensated_[c]));
  }
  pack_signs(compensated_, server_signs_);
  server.stop();

  comm_.all_gather(std::span<const std::uint8_t>(server_signs_), std::span<std::uint8_t>(all_signs_));
  comm_.all_gather(std::span<const float>(&server_scale, 1), std::span<float>(scales_));
  for (std::size_t i = 0; i < n_; ++i) values[i] = scales_[i / chunk_] * signed_one(bit_at(all_signs_, i));
  return (static_cast<std::uint64_t>(w) - 1) * chunk_bytes + sizeof(float) + chunk_bytes + sizeof(float);
}

void OnebitAllReduce::save_state(StateDict& state, const std::string& prefix) const {
  state.put(prefix + "has_errors", has_errors_ ? 1 : 0);
  if (!has_errors_) return;
  state.put(prefix + "worker_error", std::span<const float>(worker_error_));
  state.put(prefix + "server_error", std::span<const float>(server_error_));
}

void OnebitAllReduce::load_state(const StateDict& state, const std::string& prefix) {
  has_errors_ = state.integer(prefix + "has_errors") != 0;
  if (has_errors_) {
    load_exact(state, prefix + "worker_error", worker_error_, padded_);
    load_exact(state, prefix + "server_error", server_error_, chunk_);
  } else {
    worker_error_.clear();
    server_error_.clear();
  }
}

}  // namespace lowcomm::strategy

#pragma once
// The fuzzer's bytes as a stream of choices, for the targets in tests/fuzz: each take_* reads
// from the front and returns 0 (or an empty span) once the bytes run out, so every input, however
// short, is a valid sequence of choices.
//
// A target calls only_lowcomm_errors(work): a lowcomm::Error (or ConfigError) is the outcome a
// malformed input must get; any other exception escapes to libFuzzer, which reports it as a crash,
// as it does a sanitizer's report, a signal or a time-out.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : rest_(reinterpret_cast<const std::byte*>(data), size) {}

  std::uint8_t take_byte() { return static_cast<std::uint8_t>(take_uint(1)); }
  // `bytes` (up to 8) bytes as a little-endian unsigned integer.
  std::uint64_t take_uint(std::size_t bytes) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < bytes && !rest_.empty(); ++i) {
      value |= std::to_integer<std::uint64_t>(rest_.front()) << (8 * i);
      rest_ = rest_.subspan(1);
    }
    return value;
  }
  // A number in [0, count), count > 0.
  std::size_t take_index(std::size_t count) { return static_cast<std::size_t>(take_uint(2) % count); }
  float take_float() {
    const auto bits = static_cast<std::uint32_t>(take_uint(4));
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  std::span<const std::byte> take_bytes(std::size_t count) {
    const std::span<const std::byte> taken = rest_.first(std::min(count, rest_.size()));
    rest_ = rest_.subspan(taken.size());
    return taken;
  }
  std::span<const std::byte> take_rest() { return take_bytes(rest_.size()); }
  std::string take_rest_as_string() {
    const std::span<const std::byte> rest = take_rest();
    return {reinterpret_cast<const char*>(rest.data()), rest.size()};
  }
  bool empty() const { return rest_.empty(); }
  std::size_t remaining() const { return rest_.size(); }

 private:
  std::span<const std::byte> rest_;
};

template <class Work>
void only_lowcomm_errors(Work&& work) {
  try {
    work();
  } catch (const Error&) {
    // The refusal a malformed input must get.
  }
}

}  // namespace lowcomm::fuzz

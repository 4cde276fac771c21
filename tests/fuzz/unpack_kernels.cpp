// The kernels that read received bytes, on the Reference and the Cpu backend at once: fixed-width
// and 12-bit indices, signs, b-bit codes, quantised values with their scales, fp16/bf16 values. The
// input chooses the kernel, its parameters (widths, limits, counts, group sizes) and the bytes.
// Each call returns or throws lowcomm::Error, and the two backends must agree: the same outcome
// and, where both decode, the same bits (the Cpu kernels' optimised loops against the plain ones).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/pack.hpp"
#include "lowcomm/kernels/quantize.hpp"

namespace lowcomm::fuzz {
namespace {

using kernels::Backend;

// What one backend made of the input: its error, or its output's bytes.
struct Outcome {
  std::optional<std::string> error;
  std::vector<std::byte> output;
};

template <class T, class Call>
Outcome outcome_of(std::size_t count, Call&& call) {
  std::vector<T> out(count);
  try {
    call(std::span<T>(out));
  } catch (const Error& e) {
    return {.error = e.what(), .output = {}};
  }
  Outcome result;
  result.output.resize(count * sizeof(T));
  if (count > 0) std::memcpy(result.output.data(), out.data(), result.output.size());
  return result;
}

// Reference and Cpu must agree; a disagreement aborts, which libFuzzer reports with the input.
template <class T, class Call>
void both(std::size_t count, Call&& call) {
  const Outcome reference = outcome_of<T>(count, [&](std::span<T> out) { call(Backend::Reference, out); });
  const Outcome cpu = outcome_of<T>(count, [&](std::span<T> out) { call(Backend::Cpu, out); });
  if (reference.error != cpu.error || reference.output != cpu.output) std::abort();
}

void run(FuzzInput& in) {
  const std::uint8_t kernel = in.take_byte() % 7;
  // Counts near the payload's size, so that most inputs are the right size and some are not.
  const std::size_t count = in.take_uint(2) % 4096;
  switch (kernel) {
    case 0: {
      const std::size_t width = std::size_t{1} << (in.take_byte() % 4);
      const std::uint64_t limit = in.take_uint(8);
      const std::span<const std::byte> bytes = in.take_rest();
      const std::size_t n = count % 2 == 0 ? bytes.size() / width : count;
      both<std::int64_t>(n, [&](Backend b, std::span<std::int64_t> out) {
        kernels::unpack_indices(b, bytes, static_cast<kernels::IndexWidth>(width), limit, out);
      });
      break;
    }
    case 1: {
      const std::uint64_t limit = in.take_uint(2);
      const std::span<const std::byte> bytes = in.take_rest();
      const std::size_t n = count % 2 == 0 ? bytes.size() / 3 * 2 - (count % 4 == 0 && bytes.size() >= 3) : count;
      both<std::int64_t>(n, [&](Backend b, std::span<std::int64_t> out) { kernels::unpack_12bit(b, bytes, limit, out); });
      break;
    }
    case 2: {
      const std::span<const std::byte> bytes = in.take_rest();
      const std::size_t bits = bytes.size() * 8;
      const std::size_t n = count % 2 == 0 ? bits - std::min(bits, count % 8) : count;
      both<float>(n, [&](Backend b, std::span<float> out) { kernels::unpack_signs(b, bytes, out); });
      break;
    }
    case 3: {
      const int bits = 1 + in.take_byte() % 9;  // 9 is refused
      const unsigned limit = in.take_uint(2) % 300;
      const std::span<const std::byte> bytes = in.take_rest();
      const std::size_t n = count % 2 == 0 && bits <= 8 ? bytes.size() * 8 / static_cast<std::size_t>(bits) : count;
      both<std::uint8_t>(n, [&](Backend b, std::span<std::uint8_t> out) { kernels::unpack_codes(b, bytes, bits, limit, out); });
      break;
    }
    case 4:
    case 5: {
      const int bits = 1 + in.take_byte() % 8;
      const std::size_t group = 1 + in.take_uint(2) % 300;
      const std::size_t scale_count = in.take_byte() % 32;
      std::vector<float> scales(scale_count);
      for (float& s : scales) s = in.take_float();
      const std::span<const std::byte> bytes = in.take_rest();
      const std::size_t n = count % 2 == 0 ? bytes.size() * 8 / static_cast<std::size_t>(bits) : count;
      if (kernel == 4) {
        both<float>(n, [&](Backend b, std::span<float> out) { kernels::dequantize(b, bytes, scales, group, bits, out); });
      } else {
        both<float>(n, [&](Backend b, std::span<float> out) {
          kernels::dequantize_sum(b, bytes, scales, group, bits, true, static_cast<float>(1 + count % 4), out);
        });
      }
      break;
    }
    default: {
      const auto type = static_cast<kernels::ValueType>(in.take_byte() % 3);
      const std::span<const std::byte> bytes = in.take_rest();
      const std::size_t n = count % 2 == 0 ? bytes.size() / kernels::value_bytes(type) : count;
      both<float>(n, [&](Backend b, std::span<float> out) { kernels::decode_values(b, bytes, type, out); });
      break;
    }
  }
}

}  // namespace
}  // namespace lowcomm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lowcomm::fuzz::FuzzInput in(data, size);
  lowcomm::fuzz::run(in);
  return 0;
}

#include "lowcomm/compress/codebook.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/pack.hpp"

namespace lowcomm {

Codebook make_codebook(std::span<const float> values, int bins, double range) {
  if (bins < 2 || bins > 256 || !(range > 0.0)) {
    throw Error(fmt::format("codebook: {} bins and range {} (bins must be 2 to 256, range positive)", bins, range));
  }
  Codebook book;
  const std::size_t n = values.size();
  double total = 0;
  for (const float v : values) total += v;
  book.shift = n == 0 ? 0.0f : static_cast<float>(total / static_cast<double>(n));
  std::vector<float> centred(n);
  double squares = 0;
  for (std::size_t i = 0; i < n; ++i) {
    centred[i] = values[i] - book.shift;
    squares += double{centred[i]} * centred[i];
  }
  // σ = ‖c‖ / sqrt(n − 1) and scale = range·σ / bins, each operation in float as torch does.
  const float sigma = static_cast<float>(std::sqrt(squares)) / static_cast<float>(std::sqrt(static_cast<double>(n) - 1.0));
  float scale = static_cast<float>(range) * sigma / static_cast<float>(bins);
  if (scale == 0.0f || !std::isfinite(scale)) scale = 1.0f;
  const auto offset = static_cast<float>(bins / 2);
  book.codes.resize(n);
  std::vector<float> sums(static_cast<std::size_t>(bins), 0.0f), counts(static_cast<std::size_t>(bins), 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    const float rounded = std::nearbyint(centred[i] / scale + offset);  // half to even, as torch.round
    const float code = std::clamp(rounded, 0.0f, static_cast<float>(bins - 1));
    book.codes[i] = static_cast<std::uint8_t>(std::isnan(code) ? 0.0f : code);
    sums[book.codes[i]] += centred[i];
    counts[book.codes[i]] += 1.0f;
  }
  book.lookup.resize(static_cast<std::size_t>(bins));
  for (std::size_t b = 0; b < book.lookup.size(); ++b) book.lookup[b] = counts[b] > 0 ? sums[b] / counts[b] : 0.0f;
  return book;
}

int codebook_code_bits(int bins) { return std::bit_width(static_cast<unsigned>(bins - 1)); }

std::size_t codebook_bytes(std::size_t count, int bins, int bits) {
  return kernels::packed_code_bytes(count, bits) + (1 + static_cast<std::size_t>(bins)) * sizeof(float);
}

void write_codebook(kernels::Backend backend, const Codebook& book, int bits, std::span<std::byte> out) {
  const int bins = static_cast<int>(book.lookup.size());
  if (out.size() != codebook_bytes(book.codes.size(), bins, bits)) {
    throw Error(fmt::format("write_codebook: {} codes take {} bytes, got {}", book.codes.size(),
                            codebook_bytes(book.codes.size(), bins, bits), out.size()));
  }
  const std::size_t code_bytes = kernels::packed_code_bytes(book.codes.size(), bits);
  kernels::pack_codes(backend, book.codes, bits, out.first(code_bytes));
  std::memcpy(out.data() + code_bytes, &book.shift, sizeof(float));
  std::memcpy(out.data() + code_bytes + sizeof(float), book.lookup.data(), book.lookup.size() * sizeof(float));
}

void read_codebook(kernels::Backend backend, std::span<const std::byte> in, int bins, int bits,
                   std::span<float> values) {
  if (in.size() != codebook_bytes(values.size(), bins, bits)) {
    throw Error(fmt::format("read_codebook: malformed payload: {} codes take {} bytes, got {}", values.size(),
                            codebook_bytes(values.size(), bins, bits), in.size()));
  }
  const std::size_t code_bytes = kernels::packed_code_bytes(values.size(), bits);
  std::vector<std::uint8_t> codes(values.size());
  kernels::unpack_codes(backend, in.first(code_bytes), bits, static_cast<unsigned>(bins), codes);
  float shift = 0.0f;
  std::vector<float> lookup(static_cast<std::size_t>(bins));
  std::memcpy(&shift, in.data() + code_bytes, sizeof(float));
  std::memcpy(lookup.data(), in.data() + code_bytes + sizeof(float), lookup.size() * sizeof(float));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = lookup[codes[i]] + shift;
}

}  // namespace lowcomm

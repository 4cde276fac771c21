#include "lowcomm/compress/sparseloco_wire.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "lowcomm/error.hpp"

namespace lowcomm::sparseloco {

std::size_t packed_12bit_bytes(std::size_t count) { return 3 * ((count + 1) / 2); }

void pack_12bit(std::span<const std::int64_t> indices, std::span<std::byte> out) {
  if (out.size() != packed_12bit_bytes(indices.size())) {
    throw Error(fmt::format("pack_12bit: {} indices take {} bytes, got {}", indices.size(),
                            packed_12bit_bytes(indices.size()), out.size()));
  }
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= 4096) {
      throw Error(fmt::format("pack_12bit: index {} at position {} does not fit in 12 bits", indices[i], i));
    }
  }
  for (std::size_t pair = 0; 2 * pair < indices.size(); ++pair) {
    const auto a = static_cast<std::uint32_t>(indices[2 * pair]);
    const auto b = 2 * pair + 1 < indices.size() ? static_cast<std::uint32_t>(indices[2 * pair + 1]) : 0u;
    out[3 * pair] = static_cast<std::byte>(a & 0xFF);
    out[3 * pair + 1] = static_cast<std::byte>(((a >> 8) & 0x0F) | ((b & 0x0F) << 4));
    out[3 * pair + 2] = static_cast<std::byte>((b >> 4) & 0xFF);
  }
}

void unpack_12bit(std::span<const std::byte> packed, std::span<std::int64_t> indices) {
  if (packed.size() != packed_12bit_bytes(indices.size())) {
    throw Error(fmt::format("unpack_12bit: {} indices take {} bytes, got {}", indices.size(),
                            packed_12bit_bytes(indices.size()), packed.size()));
  }
  for (std::size_t pair = 0; 2 * pair < indices.size(); ++pair) {
    const auto b0 = std::to_integer<std::uint32_t>(packed[3 * pair]);
    const auto b1 = std::to_integer<std::uint32_t>(packed[3 * pair + 1]);
    const auto b2 = std::to_integer<std::uint32_t>(packed[3 * pair + 2]);
    indices[2 * pair] = static_cast<std::int64_t>(b0 | ((b1 & 0x0F) << 8));
    if (2 * pair + 1 < indices.size()) indices[2 * pair + 1] = static_cast<std::int64_t>(((b1 >> 4) & 0x0F) | (b2 << 4));
  }
}

Codebook quantize(std::span<const float> values, int bins, double range) {
  if (bins < 2 || bins > 256 || !(range > 0.0)) {
    throw Error(fmt::format("sparseloco::quantize: {} bins, range {}", bins, range));
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

std::size_t packed_code_bytes(std::size_t count, int bits) {
  return (count * static_cast<std::size_t>(bits) + 7) / 8;
}

void pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out) {
  if (bits < 1 || bits > 8 || out.size() != packed_code_bytes(codes.size(), bits)) {
    throw Error(fmt::format("pack_codes: {} codes of {} bits into {} bytes", codes.size(), bits, out.size()));
  }
  std::fill(out.begin(), out.end(), std::byte{0});
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] >> bits != 0) throw Error(fmt::format("pack_codes: code {} does not fit in {} bits", codes[i], bits));
    for (int bit = 0; bit < bits; ++bit) {
      const std::size_t at = i * static_cast<std::size_t>(bits) + static_cast<std::size_t>(bit);
      if ((codes[i] >> bit) & 1u) out[at / 8] |= static_cast<std::byte>(1u << (at % 8));
    }
  }
}

void unpack_codes(std::span<const std::byte> packed, int bits, std::span<std::uint8_t> codes) {
  if (bits < 1 || bits > 8 || packed.size() != packed_code_bytes(codes.size(), bits)) {
    throw Error(fmt::format("unpack_codes: {} codes of {} bits from {} bytes", codes.size(), bits, packed.size()));
  }
  for (std::size_t i = 0; i < codes.size(); ++i) {
    unsigned code = 0;
    for (int bit = 0; bit < bits; ++bit) {
      const std::size_t at = i * static_cast<std::size_t>(bits) + static_cast<std::size_t>(bit);
      code |= ((std::to_integer<unsigned>(packed[at / 8]) >> (at % 8)) & 1u) << bit;
    }
    codes[i] = static_cast<std::uint8_t>(code);
  }
}

std::size_t codebook_bytes(std::size_t count, int bins, int bits) {
  return packed_code_bytes(count, bits) + (1 + static_cast<std::size_t>(bins)) * sizeof(float);
}

void write_codebook(const Codebook& book, int bits, std::span<std::byte> out) {
  const int bins = static_cast<int>(book.lookup.size());
  if (out.size() != codebook_bytes(book.codes.size(), bins, bits)) {
    throw Error(fmt::format("write_codebook: {} codes take {} bytes, got {}", book.codes.size(),
                            codebook_bytes(book.codes.size(), bins, bits), out.size()));
  }
  const std::size_t code_bytes = packed_code_bytes(book.codes.size(), bits);
  pack_codes(book.codes, bits, out.first(code_bytes));
  std::memcpy(out.data() + code_bytes, &book.shift, sizeof(float));
  std::memcpy(out.data() + code_bytes + sizeof(float), book.lookup.data(), book.lookup.size() * sizeof(float));
}

void read_codebook(std::span<const std::byte> in, int bins, int bits, std::span<float> values) {
  if (in.size() != codebook_bytes(values.size(), bins, bits)) {
    throw Error(fmt::format("read_codebook: {} codes take {} bytes, got {}", values.size(),
                            codebook_bytes(values.size(), bins, bits), in.size()));
  }
  const std::size_t code_bytes = packed_code_bytes(values.size(), bits);
  std::vector<std::uint8_t> codes(values.size());
  unpack_codes(in.first(code_bytes), bits, codes);
  float shift = 0.0f;
  std::vector<float> lookup(static_cast<std::size_t>(bins));
  std::memcpy(&shift, in.data() + code_bytes, sizeof(float));
  std::memcpy(lookup.data(), in.data() + code_bytes + sizeof(float), lookup.size() * sizeof(float));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (codes[i] >= lookup.size()) {
      throw Error(fmt::format("a received code {} is outside its {} bins", codes[i], lookup.size()));
    }
    values[i] = lookup[codes[i]] + shift;
  }
}

}  // namespace lowcomm::sparseloco

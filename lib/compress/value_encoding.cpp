#include "lowcomm/compress/value_encoding.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>

#include "lowcomm/compress/codebook.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/pack.hpp"

namespace lowcomm {

namespace {

using Kind = ValueEncoding::Kind;

constexpr Kind kKinds[] = {Kind::F32, Kind::F16, Kind::BF16, Kind::Codebook, Kind::Sign, Kind::ScaledSign};

kernels::ValueType float_type(Kind kind) {
  return kind == Kind::F16 ? kernels::ValueType::F16 : kind == Kind::BF16 ? kernels::ValueType::BF16
                                                                           : kernels::ValueType::F32;
}

bool is_float(Kind kind) { return kind == Kind::F32 || kind == Kind::F16 || kind == Kind::BF16; }

// The scaled sign's magnitude: the mean |value|, summed in double in index order.
float mean_magnitude(std::span<const float> values) {
  if (values.empty()) return 0.0f;
  double total = 0;
  for (const float v : values) total += std::fabs(double{v});
  return static_cast<float>(total / static_cast<double>(values.size()));
}

}  // namespace

const std::vector<std::string>& ValueEncoding::names() {
  static const std::vector<std::string> all = {"fp32", "fp16", "bf16", "codebook", "sign", "scaled_sign"};
  return all;
}

std::string_view ValueEncoding::name() const {
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (kKinds[i] == kind) return names()[i];
  }
  return "?";
}

ValueEncoding ValueEncoding::parse(std::string_view name, std::int64_t bins, double range) {
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (names()[i] != name) continue;
    if (kKinds[i] == Kind::Codebook && (bins < 2 || bins > 256 || !(range > 0.0))) {
      throw ConfigError(fmt::format("value_type = codebook needs bins from 2 to 256 and a positive range, not {} and {}",
                                    bins, range));
    }
    return {.kind = kKinds[i], .bins = static_cast<int>(bins), .range = range};
  }
  throw ConfigError(fmt::format("value_type \"{}\" is not one of {}", name, fmt::join(names(), ", ")));
}

int ValueEncoding::bits_per_code() const { return code_bits > 0 ? code_bits : codebook_code_bits(bins); }

std::size_t ValueEncoding::bytes(std::size_t count) const {
  switch (kind) {
    case Kind::Codebook: return codebook_bytes(count, bins, bits_per_code());
    case Kind::Sign: return kernels::packed_sign_bytes(count);
    case Kind::ScaledSign: return kernels::packed_sign_bytes(count) + sizeof(float);
    default: return count * kernels::value_bytes(float_type(kind));
  }
}

void ValueEncoding::encode(kernels::Backend backend, std::span<const float> values, std::span<std::byte> out) const {
  if (out.size() != bytes(values.size())) {
    throw Error(fmt::format("{} values: {} take {} bytes, the output holds {}", name(), values.size(),
                            bytes(values.size()), out.size()));
  }
  if (is_float(kind)) {
    kernels::encode_values(backend, values, float_type(kind), out);
  } else if (kind == Kind::Codebook) {
    write_codebook(backend, make_codebook(values, bins, range), bits_per_code(), out);
  } else {
    const std::size_t sign_bytes = kernels::packed_sign_bytes(values.size());
    kernels::pack_signs(backend, values, out.first(sign_bytes));
    if (kind == Kind::ScaledSign) {
      const float magnitude = mean_magnitude(values);
      std::memcpy(out.data() + sign_bytes, &magnitude, sizeof(float));
    }
  }
}

void ValueEncoding::decode(kernels::Backend backend, std::span<const std::byte> in, std::span<float> values) const {
  if (in.size() != bytes(values.size())) {
    throw Error(fmt::format("{} values: malformed payload: {} values take {} bytes, got {}", name(), values.size(),
                            bytes(values.size()), in.size()));
  }
  if (is_float(kind)) {
    kernels::decode_values(backend, in, float_type(kind), values);
  } else if (kind == Kind::Codebook) {
    read_codebook(backend, in, bins, bits_per_code(), values);
  } else {
    const std::size_t sign_bytes = kernels::packed_sign_bytes(values.size());
    kernels::unpack_signs(backend, in.first(sign_bytes), values);
    if (kind == Kind::ScaledSign) {
      float magnitude = 0.0f;
      std::memcpy(&magnitude, in.data() + sign_bytes, sizeof(float));
      for (float& v : values) v *= magnitude;
    }
  }
}

}  // namespace lowcomm

#pragma once
// How a sparse compressor's selected values travel: one choice shared by topk, randomk and
// dct_topk (their key `value_type`, with `bins` and `range` for the codebook) and used by
// sparseloco, each counted exactly on the wire. For count values a payload holds:
//   fp32, fp16, bf16  each value rounded to the type: 4·count, 2·count, 2·count bytes
//   codebook          SparseLoCo's quantiser over the payload's values (codebook.hpp): each value
//                     a code of `code_bits` bits (ceil(log2 bins) by default), then the shift and
//                     the bins' decoded values as fp32: ceil(count·bits / 8) + 4·(bins + 1) bytes
//   sign              one bit a value, decoded as ±1: the magnitude is dropped, as Psyche's 1-bit
//                     DisTrO sends it (its optimiser takes the sign of the aggregate anyway):
//                     ceil(count / 8) bytes
//   scaled_sign       one bit a value, decoded as ±(the mean |value| of the payload), the mean
//                     sent as one fp32 after the bits (scaled sign compression, as in Karimireddy
//                     et al. 2019's EF-SignSGD): ceil(count / 8) + 4 bytes
// Encoding a NaN as a sign throws (it has none); a payload that does not decode (a size that
// disagrees, a code past the bins, set padding bits) throws lowcomm::Error.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm {

struct ValueEncoding {
  enum class Kind { F32, F16, BF16, Codebook, Sign, ScaledSign };
  Kind kind = Kind::F32;
  int bins = 4;          // codebook: codes (2 to 256)
  double range = 6.0;    // codebook: the codes' span in standard deviations
  int code_bits = 0;     // codebook: bits a code on the wire; 0: ceil(log2 bins)

  // From the names above; throws lowcomm::ConfigError for another name or a codebook's bad bins.
  static ValueEncoding parse(std::string_view name, std::int64_t bins = 4, double range = 6.0);
  static const std::vector<std::string>& names();
  std::string_view name() const;

  // fp32 alone: values that a sum of payloads (an all-reduce) aggregates exactly as sent.
  bool summable() const { return kind == Kind::F32; }

  std::size_t bytes(std::size_t count) const;
  // Writes the values (on the backend's side of memory, as the kernels take them) into `out`,
  // which holds bytes(values.size()).
  void encode(kernels::Backend backend, std::span<const float> values, std::span<std::byte> out) const;
  // What a receiver reads from a payload of bytes(values.size()) bytes.
  void decode(kernels::Backend backend, std::span<const std::byte> in, std::span<float> values) const;

 private:
  int bits_per_code() const;
};

}  // namespace lowcomm

#pragma once
// The keys a sparse compressor shares for its wire (value_encoding.hpp, index_encoding.hpp),
// declared once: `value_type` with the codebook's `bins` and `range`, and `index_width`. Its
// options struct has members of those names; a std::optional<std::string> member leaves the key
// unset by default (dct_topk: then its `wire` decides).
#include <string>

#include "lowcomm/compress/index_encoding.hpp"
#include "lowcomm/compress/value_encoding.hpp"
#include "lowcomm/config/options_schema.hpp"

namespace lowcomm::builtin {

inline constexpr const char* kValueTypeHelp =
    "values on the wire: fp32, fp16, bf16, codebook (bins codes: SparseLoCo's quantiser), sign (1 bit, decoded as "
    "+-1), scaled_sign (1 bit, decoded as +-the payload's mean magnitude)";
inline constexpr const char* kIndexWidthHelp =
    "indices on the wire: int64, int32, smallest (the smallest unsigned type that holds them), packed12 (12 bits: "
    "units or blocks of at most 4096)";

template <class Options>
OptionsSchema<Options>& value_encoding_fields(OptionsSchema<Options>& schema, const std::string& default_note = "") {
  return schema.field("value_type", &Options::value_type, kValueTypeHelp + default_note, {.choices = ValueEncoding::names()})
      .field("bins", &Options::bins, "value_type = codebook: its codes (4: 2 bits a value)", {.min = 2.0, .max = 256.0})
      .field("range", &Options::range, "value_type = codebook: its span in standard deviations (SparseLoCo's 6)",
             {.min = 1e-9});
}

template <class Options>
OptionsSchema<Options>& index_encoding_fields(OptionsSchema<Options>& schema, const std::string& default_note = "") {
  return schema.field("index_width", &Options::index_width, kIndexWidthHelp + default_note,
                      {.choices = IndexEncoding::names()});
}

}  // namespace lowcomm::builtin

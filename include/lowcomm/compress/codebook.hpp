#pragma once
// SparseLoCo's value quantiser (tplr-ai/templar, src/tplr/compress.py, _quantize_values): a set of
// values replaced by `bins` codes and a table of what each code decodes to. The `codebook` value
// encoding (value_encoding.hpp) sends it; public so that tests check it against templar.
//
// Over the values: shift = their mean, c = value − shift, σ = ‖c‖ / sqrt(n − 1),
// scale = range·σ / bins (1 where that is 0 or not finite), code = clamp(round-half-even(
// c / scale + bins / 2), 0, bins − 1), and each code decodes to shift + the mean of the c in its
// bin (0 + shift for an empty bin). The sums run in float, in index order: the set is one
// payload's selection (k values, not the tensor), and that order is what the fixture checks.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm {

struct Codebook {
  float shift = 0.0f;
  std::vector<float> lookup;        // per code: the mean of the centred values in its bin
  std::vector<std::uint8_t> codes;  // per value
  float decoded(std::uint8_t code) const { return lookup[code] + shift; }
};

// bins in [2, 256]; range > 0 (throws lowcomm::Error otherwise).
Codebook make_codebook(std::span<const float> values, int bins, double range);

// The bits a code takes when packed: ceil(log2 bins).
int codebook_code_bits(int bins);

// On the wire: the codes at `bits` each (kernels/pack.hpp's pack_codes), then the shift and the
// `bins` decoded means as fp32 (little-endian, as the host stores them).
std::size_t codebook_bytes(std::size_t count, int bins, int bits);
void write_codebook(kernels::Backend backend, const Codebook& book, int bits, std::span<std::byte> out);
// The values a received codebook decodes to. Throws lowcomm::Error for a size that disagrees or
// a code past the bins.
void read_codebook(kernels::Backend backend, std::span<const std::byte> in, int bins, int bits,
                   std::span<float> values);

}  // namespace lowcomm

// `quantize`: b-bit (1–8) quantisation with one fp32 scale per group (a row of the tensor by
// default), nearest or stochastic rounding. 8 bits per row is torchft's int8 pseudo-gradient
// format for streaming DiLoCo; 2–4 bits with stochastic rounding is QSGD-like; 1 bit with the
// mean-magnitude scale is signSGD as error feedback needs it. Payloads differ per rank (each has
// its own scales), so they are gathered and decoded one by one, a cache-sized tile of the
// aggregate at a time. With error feedback on (not the default), its correction, gradient +
// β·residual, is formed in the scales' pass (fused_correction.hpp) where the backend has the
// kernel (Reference, Cpu: kernels::corrected_quantize).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "builtins.hpp"
#include "lowcomm/compress/fused_correction.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/quantize.hpp"
#include "shared/shared_random.hpp"

namespace lowcomm::builtin {

namespace {

using kernels::Rounding;

struct Buffers {
  std::vector<std::byte> own_payload;      // what this rank sent: transmitted() dequantises it
  std::vector<std::vector<float>> scales;  // each rank's scales, aligned as floats
};

// Elements of the aggregate summed over every rank before the next ones (decode): 512 KiB of
// floats, which stay in the core's cache across the W sums instead of W passes over memory.
constexpr std::size_t kDecodeTile = std::size_t{1} << 17;

class Quantize final : public CompressorWith<Buffers>, public FusedCorrection {
 public:
  Quantize(int bits, std::optional<std::int64_t> group_size, Rounding rounding)
      : bits_(bits), group_size_(group_size), rounding_(rounding) {}

  Aggregation aggregation() const override { return Aggregation::Gathered; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Buffers& buffers) override {
    return send(unit, buffers, [&](std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
      kernels::quantize(unit.execution.backend, gradient, layout_of(unit).group, bits_, rounding_, seed, codes,
                        scales);
    });
  }

  FusedCorrection* fused_correction() override { return this; }

  bool corrects(const UnitContext& unit) const override {
    return kernels::implements(unit.execution.backend, "corrected_quantize");
  }

  // encode of decay·residual + gradient, formed in the scales' pass.
  Message encode_correcting(const UnitContext& unit, float decay, std::span<const float> residual,
                            std::span<const float> gradient, std::span<float> corrected,
                            UnitScratch& scratch) override {
    return send(unit, scratch.get_or_create<Buffers>(),
                [&](std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
                  kernels::corrected_quantize(unit.execution.backend, decay, residual, gradient, corrected,
                                              layout_of(unit).group, bits_, rounding_, seed, codes, scales);
                });
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Buffers& buffers,
                                std::span<float> aggregate) override {
    // The mean ((0 + x̂_0) + x̂_1 + ...) / W in rank order, each rank's payload dequantised
    // straight into the running sum (kernels::dequantize_sum) and the division fused into the
    // last rank's step: the same bits as summing into a zeroed aggregate and dividing after.
    const float ranks = static_cast<float>(unit.contributors());
    const std::size_t world = received.gathered.size();
    if (world == 0 || world != static_cast<std::size_t>(unit.contributors())) {
      throw Error(fmt::format("quantize: unit '{}' received {} payloads from {} ranks", unit.name, world,
                              unit.contributors()));
    }
    const Layout layout = layout_of(unit);
    buffers.scales.resize(world);
    std::vector<std::span<const std::byte>> codes(world);
    for (std::size_t w = 0; w < world; ++w) {
      codes[w] = split(unit, received.gathered[w], received.sender(w), buffers.scales[w]);
    }
    const auto sum_over_ranks = [&](std::size_t begin, std::size_t end) {
      const std::size_t first_group = begin / layout.group;
      const std::size_t groups = (end - begin + layout.group - 1) / layout.group;
      const std::size_t first_byte = begin * static_cast<std::size_t>(bits_) / 8;
      const std::size_t bytes = kernels::quantized_bytes(end - begin, bits_);
      for (std::size_t w = 0; w < world; ++w) {
        kernels::dequantize_sum(unit.execution.backend, codes[w].subspan(first_byte, bytes),
                                std::span<const float>(buffers.scales[w]).subspan(first_group, groups), layout.group,
                                bits_, w == 0, w + 1 == world ? ranks : 1.0f, aggregate.subspan(begin, end - begin));
      }
    };
    // Tiles of whole groups that start on a byte of codes; each element's sum is the same
    // ((0 + x̂_0) + x̂_1 + ...) / W as over the whole tensor.
    const std::size_t step = std::lcm(layout.group, std::size_t{8});
    const std::size_t tile = std::max(step, kDecodeTile / step * step);
    try {
      for (std::size_t begin = 0; begin < layout.count; begin += tile) {
        sum_over_ranks(begin, std::min(layout.count, begin + tile));
      }
    } catch (const Error&) {
      // A malformed payload: the untiled sums name the element or group within the whole tensor.
      sum_over_ranks(0, layout.count);
      throw;
    }
    return std::nullopt;
  }

  Transmitted transmitted(const UnitContext& unit, std::span<const float>, const Buffers& buffers,
                          std::span<float> out) const override {
    dequantize(unit, buffers.own_payload, out, unit.rank);
    return Transmitted::dense();
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return layout_of(unit).bytes();
  }

 private:
  // The payload, scales then codes, that `quantize(seed, codes, scales)` writes; kept for transmitted().
  template <typename Quantizer>
  Message send(const UnitContext& unit, Buffers& buffers, const Quantizer& quantize) const {
    const Layout layout = layout_of(unit);
    std::vector<std::byte> payload(layout.bytes());
    // Each rank draws its own rounding noise, reproducibly.
    const std::uint64_t seed = SharedRandom(unit.shared_seed, unit.step, unit.unit_id).next() ^
                               SharedRandom(unit.shared_seed, unit.rank, ~std::uint64_t{0}).next();
    std::vector<float> scale_values(layout.groups);
    quantize(seed, std::span(payload).subspan(layout.scale_bytes()), std::span(scale_values));
    std::memcpy(payload.data(), scale_values.data(), layout.scale_bytes());
    buffers.own_payload = payload;
    return Message::gather(std::move(payload));
  }

  struct Layout {
    std::size_t count, group, groups, code_bytes;
    std::size_t scale_bytes() const { return groups * sizeof(float); }
    std::size_t bytes() const { return scale_bytes() + code_bytes; }
  };

  Layout layout_of(const UnitContext& unit) const {
    const auto count = static_cast<std::size_t>(unit.numel());
    const std::size_t row = unit.shape.empty() ? 1 : static_cast<std::size_t>(unit.shape.back());
    const std::size_t group = std::max<std::size_t>(1, group_size_ ? static_cast<std::size_t>(*group_size_) : row);
    const std::size_t groups = (count + group - 1) / group;
    return {count, group, groups, kernels::quantized_bytes(count, bits_)};
  }

  // A payload's codes, after checking its size and copying its scales into `scales` (the payload
  // need not be aligned for floats).
  std::span<const std::byte> split(const UnitContext& unit, std::span<const std::byte> payload, int from_rank,
                                   std::vector<float>& scales) const {
    const Layout layout = layout_of(unit);
    if (payload.size() != layout.bytes()) {
      throw Error(fmt::format("quantize: rank {} sent {} bytes for unit '{}', expected {}", from_rank,
                              payload.size(), unit.name, layout.bytes()));
    }
    scales.resize(layout.groups);
    std::memcpy(scales.data(), payload.data(), layout.scale_bytes());
    return payload.subspan(layout.scale_bytes());
  }

  void dequantize(const UnitContext& unit, std::span<const std::byte> payload, std::span<float> out,
                  int from_rank) const {
    std::vector<float> scales;
    const std::span<const std::byte> codes = split(unit, payload, from_rank, scales);
    kernels::dequantize(unit.execution.backend, codes, scales, layout_of(unit).group, bits_, out);
  }

  int bits_;
  std::optional<std::int64_t> group_size_;
  Rounding rounding_;
};

struct QuantizeOptions {
  std::int64_t bits = 8;
  std::optional<std::int64_t> group_size;
  std::string rounding = "nearest";
};

const OptionsSchema<QuantizeOptions>& quantize_schema() {
  static const auto schema =
      OptionsSchema<QuantizeOptions>()
          .field("bits", &QuantizeOptions::bits, "bits per value; 1 is signSGD (scale = mean |x|)",
                 {.min = 1.0, .max = 8.0})
          .field("group_size", &QuantizeOptions::group_size,
                 "values per scale; unset: one scale per row (last dimension)", {.min = 1.0})
          .field("rounding", &QuantizeOptions::rounding, "nearest, or stochastic (unbiased; not for 1 bit)",
                 {.choices = {"nearest", "stochastic"}});
  return schema;
}

}  // namespace

CompressorInfo quantize_compressor() {
  return {.name = "quantize",
          .description = "b-bit values with one fp32 scale per row or group (int8, QSGD-like, signSGD)",
          .parameters = quantize_schema().keys(),
          .wire_examples = {{}, {"bits=3"}},
          .error_feedback_by_default = false,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const QuantizeOptions options = quantize_schema().read(p);
            const auto bits = static_cast<int>(options.bits);
            const bool stochastic = options.rounding == "stochastic";
            if (bits == 1 && stochastic) p.reject("rounding", "1-bit values have no rounding; use nearest");
            return std::make_unique<Quantize>(bits, options.group_size,
                                              stochastic ? Rounding::Stochastic : Rounding::Nearest);
          },
          .label = {{"bits", "bits"}}};
}

}  // namespace lowcomm::builtin

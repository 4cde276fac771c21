// `sparseloco`: SparseLoCo's wire (arXiv 2508.15706; tplr-ai/templar's TopKCompressor with
// 12-bit indices and quantised values). Per unit, no DCT:
//   - blocks as DeMo's (kernels/blocks.hpp): each dimension cut by its largest divisor ≤ chunk;
//   - in each block the k entries of largest magnitude, k = topk made even and at least 2 as
//     templar does (never more than the block: a block of 1 sends its 1);
//   - indices within the block, 12 bits each (index_encoding.hpp's packed12);
//   - values: bins = 0 sends them as fp32; else templar's codebook over the unit's selected values
//     (value_encoding.hpp, codebook.hpp: codes of ceil(log2 bins) bits, or one byte each as templar
//     sends them, then the shift and the bins' decoded means as fp32);
//   - the aggregate: each rank's decoded values scaled down to the median of the ranks' norms
//     where larger (templar's clip_norm; the lower median for an even count, as torch.median),
//     then per entry the mean over the ranks that selected it (0 where none did).
// With error feedback at decay 0.95 and DiLoCo's outer step with no momentum and outer lr 1 this
// is SparseLoCo (docs/strategies.md).
//
// exchange = "tree": the selection merged up gTop-k's tree (merge_schedule.hpp) instead of
// gathered, in block_tree.hpp's payload (12-bit indices, fp32 sums, a count per entry; each merge
// keeps the k largest |sum| per block), the aggregate sum / count per kept entry: the gather's
// per-entry mean where nothing was dropped. Two parts of the wire cannot travel a tree, so the
// tree refuses them: codebook values (a merge must add values; bins = 0 sends fp32) and the norm
// clip (the median of every rank's norm, known only once every payload has arrived; norm_clip =
// false). As gTop-k, a rank counts as transmitted its own entries whose index is among the final
// k of their block; error feedback keeps the rest.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shared/block_tree.hpp"
#include "builtins.hpp"
#include "lowcomm/compress/index_encoding.hpp"
#include "lowcomm/compress/value_encoding.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/topk.hpp"

namespace lowcomm::builtin {

namespace {

struct SparseLocoOptions {
  std::int64_t chunk = 64;
  std::int64_t topk = 64;
  std::int64_t bins = 4;
  double range = 6.0;
  bool packed_codes = true;
  bool norm_clip = true;
  std::string exchange = "gather";
};

// A unit's scratch: this rank's selection of a step (positions in the unit and the values as
// receivers decode them), where each block-major element comes from in the unit (its shape's
// alone, made on the first encode), and two unit-sized buffers kept from step to step, so that
// no step pays for fresh pages: the unit in block-major order, and the per-entry rank counts
// (zero between calls).
struct Selection {
  std::vector<std::int64_t> indices;
  std::vector<float> values;
  std::vector<std::int64_t> within;  // the tree: the entries' indices within their blocks
  std::vector<float> kept;           // the tree: values, +0 where the merges dropped the index
  std::vector<std::int64_t> origin;
  std::vector<float> blocked;
  std::vector<float> counts;
};

// A unit's blocks and how many entries each sends.
struct Plan {
  kernels::BlockLayout layout;
  std::int64_t k = 0;
  std::int64_t count() const { return layout.blocks() * k; }
  std::uint64_t limit() const { return static_cast<std::uint64_t>(layout.block_size()); }  // indices are in-block
};

class SparseLoco final : public CompressorWith<Selection> {
 public:
  explicit SparseLoco(SparseLocoOptions options)
      : o_(options),
        values_(o_.bins == 0 ? ValueEncoding{}
                             : ValueEncoding{.kind = ValueEncoding::Kind::Codebook,
                                             .bins = static_cast<int>(o_.bins),
                                             .range = o_.range,
                                             .code_bits = o_.packed_codes ? 0 : 8}),
        tree_(o_.exchange == "tree") {}

  Aggregation aggregation() const override { return tree() ? Aggregation::Merged : Aggregation::Gathered; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> input, Selection& selection) override {
    const Plan plan = plan_of(unit);
    const std::int64_t block = plan.layout.block_size();
    const std::vector<std::int64_t>& origin = origins(plan.layout, selection);
    std::vector<float>& blocked = selection.blocked;
    blocked.resize(origin.size());
    for (std::size_t i = 0; i < origin.size(); ++i) blocked[i] = input[static_cast<std::size_t>(origin[i])];
    const auto count = static_cast<std::size_t>(plan.count());
    std::vector<std::int64_t>& within = selection.within;
    within.resize(count);
    std::vector<float> values(count);
    kernels::topk_per_block(kHost, blocked, block, plan.k, within, values);
    std::vector<std::byte> payload;
    if (!tree()) {
      payload.resize(payload_bytes(plan));
      const std::size_t index_bytes = kIndices.bytes(count, plan.limit());
      kIndices.pack(kHost, within, plan.limit(), std::span(payload).first(index_bytes));
      const std::span<std::byte> rest = std::span(payload).subspan(index_bytes);
      values_.encode(kHost, values, rest);
      values_.decode(kHost, std::span<const std::byte>(rest), values);  // what receivers will see
    }
    selection.indices.resize(count);
    selection.values.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const auto b = static_cast<std::int64_t>(i) / plan.k;
      selection.indices[i] = origin[static_cast<std::size_t>(b * block + within[i])];
      selection.values[i] = 0.0f + values[i];  // what the dense form, 0 + v at each index, holds
    }
    // The tree's payload carries these values (fp32), with the indices within their blocks.
    if (tree()) return Message::merge(tree_wire(plan).own(unit, within, selection.values));
    return Message::gather(std::move(payload));
  }

  std::vector<std::byte> merge(const UnitContext& unit, std::span<const std::byte> mine,
                               std::span<const std::byte> theirs) const override {
    return tree_wire(plan_of(unit)).merge(unit, mine, theirs);
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Selection& selection,
                                std::span<float> aggregate) override {
    const Plan plan = plan_of(unit);
    if (tree()) return decode_merged(unit, plan, received.merged, selection, aggregate);
    const auto count = static_cast<std::size_t>(plan.count());
    const std::vector<std::int64_t>& origin = origins(plan.layout, selection);
    const std::size_t ranks = received.gathered.size();
    std::vector<std::vector<std::int64_t>> indices(ranks, std::vector<std::int64_t>(count));
    std::vector<std::vector<float>> values(ranks, std::vector<float>(count));
    std::vector<float> norms(ranks);
    for (std::size_t w = 0; w < ranks; ++w) {
      const std::span<const std::byte> payload = received.gathered[w];
      if (payload.size() != payload_bytes(plan)) {
        throw Error(fmt::format("sparseloco: rank {} sent {} bytes for unit '{}', expected {}", received.sender(w),
                                payload.size(), unit.name, payload_bytes(plan)));
      }
      read_selection(plan, origin, payload, indices[w], values[w]);
      double squares = 0;
      for (const float v : values[w]) squares += double{v} * v;
      norms[w] = static_cast<float>(std::sqrt(squares));
    }
    if (o_.norm_clip && ranks > 0) {
      std::vector<float> sorted = norms;
      std::sort(sorted.begin(), sorted.end());
      const float median = sorted[(ranks - 1) / 2];  // the lower median, as torch.median
      for (std::size_t w = 0; w < ranks; ++w) {
        const float factor = std::min(median / (norms[w] + 1e-8f), 1.0f);
        for (float& v : values[w]) v *= factor;
      }
    }
    std::vector<float>& counts = selection.counts;
    counts.resize(aggregate.size(), 0.0f);
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);
    for (std::size_t w = 0; w < ranks; ++w) {
      for (std::size_t i = 0; i < count; ++i) {
        const auto at = static_cast<std::size_t>(indices[w][i]);
        aggregate[at] += values[w][i];
        counts[at] += 1.0f;
      }
    }
    // Each selected entry divided once by its count, which is then cleared for the next call.
    for (std::size_t w = 0; w < ranks; ++w) {
      for (std::size_t i = 0; i < count; ++i) {
        const auto at = static_cast<std::size_t>(indices[w][i]);
        if (counts[at] > 0.0f) aggregate[at] /= counts[at];
        counts[at] = 0.0f;
      }
    }
    return std::nullopt;
  }

  Transmitted transmitted(const UnitContext&, std::span<const float>, const Selection& selection,
                          std::span<float>) const override {
    return Transmitted::entries(selection.indices, tree() ? selection.kept : selection.values);
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    const Plan plan = plan_of(unit);
    return tree() ? tree_wire(plan).payload_bytes() : payload_bytes(plan);
  }

 private:
  Plan plan_of(const UnitContext& unit) const {
    const std::vector<std::int64_t> flat{unit.numel()};
    const kernels::BlockLayout layout = kernels::block_layout(unit.shape.empty() ? flat : unit.shape, o_.chunk);
    std::int64_t k = std::min(o_.topk, layout.block_size());
    k = std::max<std::int64_t>(k, 2);
    k -= k % 2;
    return {layout, std::min(k, layout.block_size())};
  }

  // origin[j] = the unit's element at block-major position j (block by block, row-major inside),
  // kept in the unit's scratch.
  static const std::vector<std::int64_t>& origins(const kernels::BlockLayout& l, Selection& scratch) {
    std::vector<std::int64_t>& origin = scratch.origin;
    if (origin.size() == static_cast<std::size_t>(l.size())) return origin;
    origin.resize(static_cast<std::size_t>(l.size()));
    const std::int64_t block_rows_count = l.rows / l.block_rows, block_cols_count = l.cols / l.block_cols;
    std::size_t j = 0;
    for (std::int64_t b = 0; b < l.batch; ++b) {
      for (std::int64_t br = 0; br < block_rows_count; ++br) {
        for (std::int64_t bc = 0; bc < block_cols_count; ++bc) {
          for (std::int64_t r = 0; r < l.block_rows; ++r) {
            for (std::int64_t c = 0; c < l.block_cols; ++c) {
              origin[j++] = (b * l.rows + br * l.block_rows + r) * l.cols + bc * l.block_cols + c;
            }
          }
        }
      }
    }
    return origin;
  }

  bool tree() const { return tree_; }
  BlockTree tree_wire(const Plan& plan) const {
    return {"sparseloco (tree)", {.blocks = plan.layout.blocks(), .k = plan.k, .block_size = plan.layout.block_size()},
            ValueEncoding{}, kIndices, kHost};
  }

  // The aggregate from the merged payload, and which of this rank's own entries are among it.
  std::optional<Message> decode_merged(const UnitContext& unit, const Plan& plan, std::span<const std::byte> merged,
                                       Selection& selection, std::span<float> aggregate) const {
    const BlockTree wire = tree_wire(plan);
    const BlockTreeEntries global = wire.read(unit, merged, "the merged payload");
    const std::vector<std::int64_t>& origin = origins(plan.layout, selection);
    const std::int64_t block = plan.layout.block_size();
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);
    for (std::size_t e = 0; e < global.indices.size(); ++e) {
      const auto b = static_cast<std::int64_t>(e) / plan.k;
      aggregate[static_cast<std::size_t>(origin[static_cast<std::size_t>(b * block + global.indices[e])])] =
          global.sums[e] / static_cast<float>(global.counts[e]);
    }
    selection.kept.resize(selection.values.size());
    wire.keep_own(global, selection.within, selection.values, selection.kept);
    return std::nullopt;
  }

  std::size_t payload_bytes(const Plan& plan) const {
    const auto count = static_cast<std::size_t>(plan.count());
    return kIndices.bytes(count, plan.limit()) + values_.bytes(count);
  }

  // A rank's payload: its entries' positions in the unit and their decoded values.
  void read_selection(const Plan& plan, std::span<const std::int64_t> origin, std::span<const std::byte> payload,
                      std::span<std::int64_t> indices, std::span<float> values) const {
    const std::size_t count = indices.size();
    const std::size_t index_bytes = kIndices.bytes(count, plan.limit());
    std::vector<std::int64_t> within(count);
    kIndices.unpack(kHost, payload.first(index_bytes), plan.limit(), within);  // each below its block's size
    const std::int64_t block = plan.layout.block_size();
    for (std::size_t i = 0; i < count; ++i) {
      const auto b = static_cast<std::int64_t>(i) / plan.k;
      indices[i] = origin[static_cast<std::size_t>(b * block + within[i])];
    }
    values_.decode(kHost, payload.subspan(index_bytes), values);
  }

  // Its block-major copies are host vectors, so it computes on the host whatever the unit's backend.
  static constexpr kernels::Backend kHost = kernels::Backend::Cpu;
  static constexpr IndexEncoding kIndices{.kind = IndexEncoding::Kind::Packed12};
  SparseLocoOptions o_;
  ValueEncoding values_;
  bool tree_;  // exchange = "tree", read once
};

const OptionsSchema<SparseLocoOptions>& sparseloco_schema() {
  static const auto schema =
      OptionsSchema<SparseLocoOptions>()
          .field("chunk", &SparseLocoOptions::chunk,
                 "largest block side (each dimension's largest divisor up to it); at most 64, so that a block's "
                 "indices fit in 12 bits",
                 {.min = 1.0, .max = 64.0})
          .field("topk", &SparseLocoOptions::topk, "entries kept per block, made even and at least 2 (templar)",
                 {.min = 1.0})
          .field("bins", &SparseLocoOptions::bins,
                 "codebook size for the values (4: 2 bits, SparseLoCo's); 0 sends fp32 values", {.min = 0.0, .max = 256.0})
          .field("range", &SparseLocoOptions::range, "the codebook's range in standard deviations", {.min = 1e-9})
          .field("packed_codes", &SparseLocoOptions::packed_codes,
                 "codes at ceil(log2 bins) bits each (the paper's count); false: one byte each, as templar sends them")
          .field("norm_clip", &SparseLocoOptions::norm_clip,
                 "scale each rank's values down to the median of the ranks' norms where larger (templar's clip_norm)")
          .field("exchange", &SparseLocoOptions::exchange,
                 "gather (every payload to every rank) or tree (merged pairwise with a count per entry, the k largest "
                 "sums kept per block at each merge; compressor.merge_groups picks the tree; needs bins = 0 and "
                 "norm_clip = false)",
                 {.choices = {"gather", "tree"}});
  return schema;
}

}  // namespace

CompressorInfo sparseloco_compressor() {
  return {.name = "sparseloco",
          .description = "SparseLoCo's wire: top-k per block (no DCT), 12-bit indices, values on a 2-bit codebook, "
                         "peer-norm clipping, per-entry mean over the ranks that chose an entry (gathered, or merged "
                         "up a tree with fp32 values)",
          .parameters = sparseloco_schema().keys(),
          .wire_examples = {{"topk=4", "chunk=8"},
                       {"topk=4", "chunk=8", "bins=0"},
                       {"topk=4", "chunk=8", "bins=5", "packed_codes=false"},
                       {"topk=4", "chunk=8", "bins=0", "norm_clip=false", "exchange=tree"}},
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const SparseLocoOptions options = sparseloco_schema().read(p);
            if (options.bins == 1) {
              throw ConfigError(fmt::format("{}.bins = 1 leaves one code: set 0 (fp32 values) or 2 to 256", p.prefix()));
            }
            if (options.exchange == "tree" && options.bins != 0) {
              throw ConfigError(fmt::format("{0}.exchange = \"tree\" sums values at every merge, which codebook codes "
                                            "cannot hold: set {0}.bins = 0 (fp32 values)",
                                            p.prefix()));
            }
            if (options.exchange == "tree" && options.norm_clip) {
              throw ConfigError(fmt::format("{0}.exchange = \"tree\" cannot clip to the median of the ranks' norms "
                                            "(a merge sees two payloads, not every rank's norm): set {0}.norm_clip = "
                                            "false",
                                            p.prefix()));
            }
            return std::make_unique<SparseLoco>(options);
          },
          .label = {{"topk", "topk"}, {"bins", "bins"}}};
}

}  // namespace lowcomm::builtin

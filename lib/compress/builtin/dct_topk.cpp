// `dct_topk`: DeMo's transport (REFERENCE.md §1). Each tensor is cut into blocks (largest divisor
// of each dimension ≤ chunk), every block goes through an orthonormal DCT-II, and the k
// coefficients of largest magnitude per block travel with their in-block index. The aggregate is
// the inverse DCT of the scatter-mean of every rank's coefficients: a slot holds the mean over
// the ranks that selected it (not the sum over W). Wire formats:
//   reference     int64 indices, fp32 values (what the DeMo paper's MB/step counts)
//   compact       the smallest unsigned index type that holds h·w, fp32 values (Psyche)
//   compact_1bit  compact indices and one sign bit per value (received set → −1, clear → +1)
// and `value_type` / `index_width`, when set, replace the wire's choice (value_encoding.hpp,
// index_encoding.hpp: e.g. a 2-bit codebook with 12-bit indices, SparseLoCo's wire after a DCT).
// `transmitted` is the selection before its value encoding, whichever it is, as Psyche's sender
// keeps it for 1 bit: DeMo removes its own estimate from the momentum, not what rounding made of it.
//
// exchange = "tree": DeMo over gTop-k's merge tree (merge_schedule.hpp) instead of the gather,
// the coefficients in block_tree.hpp's payload (each entry with the number of ranks summed into
// it; merges keep the k largest |sum| per block). The aggregate is the inverse DCT of sum / count
// per kept slot: the scatter-mean over the ranks whose entries reached it, so with nothing dropped
// it is the gather's. As gTop-k, a rank counts as transmitted its own entries whose index is among
// the final k of their block.
#include <fmt/format.h>

#include <algorithm>

#include "shared/block_tree.hpp"
#include "builtins.hpp"
#include "lowcomm/compress/dct_topk_options.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/dct_topk.hpp"
#include "lowcomm/kernels/scatter.hpp"
#include "shared/wire_fields.hpp"

namespace lowcomm::builtin {

namespace {

using kernels::BlockLayout;

struct Selection {
  std::vector<std::int64_t> indices;  // within their block
  std::vector<float> values;          // unquantised
};
// Kept from step to step, so that no call pays for fresh pages.
struct Buffers {
  Selection selection;                         // encode's, for transmitted
  std::vector<std::int64_t> received_indices;  // every rank's, within their blocks
  std::vector<float> received_values;
  std::vector<float> kept_values;              // the tree: selection.values, +0 where the merges dropped the index
};

class DctTopK final : public CompressorWith<Buffers> {
 public:
  DctTopK(std::int64_t k, std::int64_t chunk, ValueEncoding values, IndexEncoding indices, bool tree)
      : k_(k), chunk_(chunk), values_(values), indices_(indices), tree_(tree) {}

  Aggregation aggregation() const override { return tree_ ? Aggregation::Merged : Aggregation::Gathered; }
  bool supports(Granularity granularity) const override { return granularity == Granularity::PerTensor; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Buffers& buffers) override {
    const Plan plan = plan_of(unit);
    Selection& selection = buffers.selection;
    selection.indices.resize(plan.selected());
    selection.values.resize(plan.selected());
    kernels::dct_topk_per_block(unit.execution.backend, plan.layout, gradient, plan.k, selection.indices,
                                selection.values);
    if (tree_) return Message::merge(tree_wire(unit, plan).own(unit, selection.indices, selection.values));
    std::vector<std::byte> payload(plan.gathered_bytes());
    const auto [index_part, value_part] = split(std::span(payload), plan);
    indices_.pack(unit.execution.backend, selection.indices, plan.limit(), index_part);
    values_.encode(unit.execution.backend, selection.values, value_part);
    return Message::gather(std::move(payload));
  }

  std::vector<std::byte> merge(const UnitContext& unit, std::span<const std::byte> mine,
                               std::span<const std::byte> theirs) const override {
    return tree_wire(unit, plan_of(unit)).merge(unit, mine, theirs);
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Buffers& buffers,
                                std::span<float> aggregate) override {
    const Plan plan = plan_of(unit);
    if (tree_) return decode_merged(unit, plan, received.merged, buffers, aggregate);
    const std::size_t per_rank = plan.selected();
    buffers.received_indices.resize(per_rank * received.gathered.size());
    buffers.received_values.resize(buffers.received_indices.size());
    std::vector<kernels::BlockPairs> sources;
    for (std::size_t w = 0; w < received.gathered.size(); ++w) {
      const std::span<const std::byte> payload = received.gathered[w];
      if (payload.size() != plan.gathered_bytes()) {
        throw Error(fmt::format("dct_topk: rank {} sent {} bytes for '{}', expected {}", received.sender(w), payload.size(),
                                unit.name, plan.gathered_bytes()));
      }
      const auto [index_part, value_part] = split(payload, plan);
      const std::span<std::int64_t> indices = std::span(buffers.received_indices).subspan(w * per_rank, per_rank);
      const std::span<float> values = std::span(buffers.received_values).subspan(w * per_rank, per_rank);
      indices_.unpack(unit.execution.backend, index_part, plan.limit(), indices);
      values_.decode(unit.execution.backend, value_part, values);
      sources.push_back({indices, values});
    }
    kernels::scatter_mean_dct_decode(unit.execution.backend, plan.layout, plan.k, sources, aggregate);
    return std::nullopt;
  }

  // IDCT(scatter(own indices, own unquantised values)): what DeMo removes from its momentum.
  Transmitted transmitted(const UnitContext& unit, std::span<const float>, const Buffers& buffers,
                          std::span<float> out) const override {
    const Plan plan = plan_of(unit);
    // The mean over one list of distinct indices is each value itself (0 + v, then / 1): the
    // scatter into zeros that DeMo's own estimate is.
    const Selection& selection = buffers.selection;
    const std::vector<kernels::BlockPairs> own = {
        {selection.indices, tree_ ? std::span<const float>(buffers.kept_values) : std::span<const float>(selection.values)}};
    kernels::scatter_mean_dct_decode(unit.execution.backend, plan.layout, plan.k, own, out);
    return Transmitted::dense();
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    const Plan plan = plan_of(unit);
    return tree_ ? tree_wire(unit, plan).payload_bytes() : plan.gathered_bytes();
  }

 private:
  struct Plan {
    BlockLayout layout;
    std::int64_t k;  // per block: clamp(k, 1, h·w)
    const ValueEncoding& values;
    const IndexEncoding& indices;
    std::size_t selected() const { return static_cast<std::size_t>(layout.blocks() * k); }
    std::uint64_t limit() const { return static_cast<std::uint64_t>(layout.block_size()); }  // indices are in-block
    std::size_t index_bytes() const { return indices.bytes(selected(), limit()); }
    std::size_t value_bytes() const { return values.bytes(selected()); }
    std::size_t gathered_bytes() const { return index_bytes() + value_bytes(); }
  };
  Plan plan_of(const UnitContext& unit) const {
    const BlockLayout layout = kernels::block_layout(unit.shape, chunk_);
    return {layout, std::clamp<std::int64_t>(k_, 1, layout.block_size()), values_, indices_};
  }

  BlockTree tree_wire(const UnitContext& unit, const Plan& plan) const {
    return {"dct_topk (tree)", {.blocks = plan.layout.blocks(), .k = plan.k, .block_size = plan.layout.block_size()},
            values_, indices_, unit.execution.backend};
  }

  // The aggregate from the merged payload, and which of this rank's own entries are among it.
  std::optional<Message> decode_merged(const UnitContext& unit, const Plan& plan, std::span<const std::byte> merged,
                                       Buffers& buffers, std::span<float> aggregate) const {
    const BlockTree wire = tree_wire(unit, plan);
    const BlockTreeEntries global = wire.read(unit, merged, "the merged payload");
    std::vector<float>& means = buffers.received_values;
    means.resize(global.sums.size());
    for (std::size_t e = 0; e < means.size(); ++e) means[e] = global.sums[e] / static_cast<float>(global.counts[e]);
    const std::vector<kernels::BlockPairs> sources = {{global.indices, means}};
    kernels::scatter_mean_dct_decode(unit.execution.backend, plan.layout, plan.k, sources, aggregate);
    buffers.kept_values.resize(buffers.selection.values.size());
    wire.keep_own(global, buffers.selection.indices, buffers.selection.values, buffers.kept_values);
    return std::nullopt;
  }

  template <class Byte>
  static std::pair<std::span<Byte>, std::span<Byte>> split(std::span<Byte> payload, const Plan& plan) {
    return {payload.first(plan.index_bytes()), payload.subspan(plan.index_bytes())};
  }

  std::int64_t k_;
  std::int64_t chunk_;
  ValueEncoding values_;
  IndexEncoding indices_;
  bool tree_;
};

const OptionsSchema<DctTopKOptions>& dct_topk_schema() {
  static const auto schema = [] {
    OptionsSchema<DctTopKOptions> s;
    s.field("topk", &DctTopKOptions::topk, "coefficients kept per block (DeMo's compression_topk)", {.min = 1.0})
        .field("chunk", &DctTopKOptions::chunk, "largest block side (DeMo's compression_chunk)", {.min = 1.0})
        .field("wire", &DctTopKOptions::wire,
               "reference: int64 indices + fp32; compact: smallest index type; compact_1bit: and one sign bit "
               "per value",
               {.choices = {"reference", "compact", "compact_1bit"}});
    value_encoding_fields(s, " (unset: the wire's)");
    index_encoding_fields(s, " (unset: the wire's)");
    s.field("exchange", &DctTopKOptions::exchange,
            "gather (every payload to every rank) or tree (merged pairwise with a count per entry, the k largest "
            "sums kept per block at each merge; compressor.merge_groups picks the tree; fp32 values only)",
            {.choices = {"gather", "tree"}});
    return s;
  }();
  return schema;
}

// The wire's encodings, each replaced by value_type / index_width where set.
std::pair<ValueEncoding, IndexEncoding> encodings_of(const DctTopKOptions& o) {
  const bool reference = o.wire == "reference";
  const std::string values = o.value_type.value_or(o.wire == "compact_1bit" ? "sign" : "fp32");
  const std::string indices = o.index_width.value_or(reference ? "int64" : "smallest");
  return {ValueEncoding::parse(values, o.bins, o.range), IndexEncoding::parse(indices)};
}

}  // namespace

CompressorInfo dct_topk_compressor() {
  return {.name = "dct_topk",
          .description = "DeMo's transport: top-k per DCT block, gathered (or merged up a tree), scatter-mean, inverse DCT",
          .parameters = dct_topk_schema().keys(),
          .wire_examples = {{"topk=4", "chunk=8"},
                       {"topk=4", "chunk=8", "wire=compact_1bit"},
                       {"topk=4", "chunk=8", "value_type=codebook", "index_width=packed12"},
                       {"topk=4", "chunk=8", "exchange=tree"}},
          .error_feedback_by_default = false,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const DctTopKOptions options = dct_topk_schema().read(p);
            const auto [values, indices] = encodings_of(options);
            const bool tree = options.exchange == "tree";
            if (tree && !values.summable()) {
              throw ConfigError(fmt::format("compressor.dct_topk.exchange = \"tree\" sums values at every merge, which "
                                            "needs fp32 values (got \"{}\": set wire = \"reference\" or \"compact\" "
                                            "and leave value_type unset)",
                                            values.name()));
            }
            return std::make_unique<DctTopK>(options.topk, options.chunk, values, indices, tree);
          },
          .label = {{"topk", "k"}, {"chunk", "chunk", "64"}}};
}

}  // namespace lowcomm::builtin

namespace lowcomm {

DctTopKOptions dct_topk_options(const Config& config, std::string_view prefix) {
  return builtin::dct_topk_schema().read(ComponentParameters(config, fmt::format("{}.dct_topk", prefix)));
}

}  // namespace lowcomm

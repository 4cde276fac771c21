#include "lowcomm/log/replay_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

#include "hdf5_attributes.hpp"
#include "hdf5_handle.hpp"
#include "lowcomm/build_info.hpp"

namespace lowcomm {

namespace {

using log_detail::check;
using log_detail::Hdf5Id;
using log_detail::ReportedFile;
using log_detail::SilenceHdf5Errors;

// Layout version of the file (docs/replay.md).
constexpr std::int64_t kFormatVersion = 1;

// Failures name the file as "replay output <path>", not as a run log.
ReportedFile reported(const std::filesystem::path& partial) {
  return ReportedFile(partial, "replay output");
}

// A fixed-size dataset [rows, *row_shape], written one row (or one [row, rank] slice) at a time.
class RowDataset {
 public:
  RowDataset(hid_t parent, const std::string& name, hid_t file_type, hid_t memory_type,
             std::vector<hsize_t> dims, const std::filesystem::path& file)
      : memory_type_(memory_type), dims_(std::move(dims)), name_(name), file_(file) {
    const Hdf5Id space(check(H5Screate_simple(static_cast<int>(dims_.size()), dims_.data(),
                                              nullptr),
                             reported(file), "cannot make a dataspace"),
                       H5Sclose);
    // Intermediate groups (/params, /metrics) come from the link-creation property list.
    const Hdf5Id links(check(H5Pcreate(H5P_LINK_CREATE), reported(file), "cannot make properties"),
                       H5Pclose);
    check(H5Pset_create_intermediate_group(links.get(), 1), reported(file),
          "cannot make properties");
    dataset_ = Hdf5Id(check(H5Dcreate2(parent, name.c_str(), file_type, space.get(), links.get(),
                                       H5P_DEFAULT, H5P_DEFAULT),
                            reported(file), "cannot create " + name),
                      H5Dclose);
  }

  // Writes the block that starts at `leading` (one index per leading dimension) and spans the
  // remaining dimensions.
  void write(std::span<const hsize_t> leading, const void* data) {
    const std::string what = "cannot write " + name_;
    const Hdf5Id space(check(H5Dget_space(dataset_.get()), reported(file_), what), H5Sclose);
    std::vector<hsize_t> start(dims_.size(), 0), count(dims_);
    hsize_t elements = 1;
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      if (d < leading.size()) {
        start[d] = leading[d];
        count[d] = 1;
      }
      elements *= count[d];
    }
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                              nullptr),
          reported(file_), what);
    const Hdf5Id memory(check(H5Screate_simple(1, &elements, nullptr), reported(file_), what),
                        H5Sclose);
    check(H5Dwrite(dataset_.get(), memory_type_, memory.get(), space.get(), H5P_DEFAULT, data),
          reported(file_), what);
  }

 private:
  Hdf5Id dataset_;
  hid_t memory_type_;
  std::vector<hsize_t> dims_;
  std::string name_;
  std::filesystem::path file_;
};

// Every dataset of the file; closed as a whole before the file, whose close writes them out.
struct Datasets {
  std::vector<RowDataset> params;  // one per tensor, [steps + 1, W, *shape]
  // [steps, W]
  RowDataset bytes_sent, bytes_received, payload_bytes;
  RowDataset relative_error, cosine, cumulative_relative_error, measured_comm_s, codec_s;
  RowDataset modelled_comm_s;  // [steps]
};

}  // namespace

struct ReplayOutput::State {
  std::filesystem::path out, partial;
  int world_size = 0;
  std::vector<std::int64_t> numel;  // per tensor
  std::int64_t total_numel = 0;
  Hdf5Id file;
  std::optional<Datasets> datasets;
  // Set once this output created OUT.partial, cleared by commit(): a partial file that another
  // process holds (the create failed) is not ours to remove.
  bool remove_partial = false;

  // Here rather than in ~ReplayOutput so that a constructor that fails halfway cleans up too.
  ~State() {
    if (!remove_partial) return;
    const SilenceHdf5Errors silence;
    datasets.reset();
    file.close();
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
  }
};

ReplayOutput::ReplayOutput(const std::filesystem::path& out,
                           const std::vector<TensorInfo>& tensors, int world_size,
                           std::int64_t steps, const ReplayOutputMetadata& metadata)
    : state_(std::make_unique<State>()) {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  s.out = out;
  s.partial = out.string() + ".partial";
  s.world_size = world_size;
  const ReportedFile file = reported(s.partial);
  s.file = Hdf5Id(check(H5Fcreate(s.partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                        file, "cannot create the file; check that its folder exists and is "
                              "writable"),
                  H5Fclose);
  s.remove_partial = true;

  const hid_t root = s.file.get();
  const auto w = static_cast<hsize_t>(world_size), rows = static_cast<hsize_t>(steps);
  std::vector<RowDataset> params;
  for (const TensorInfo& t : tensors) {
    std::vector<hsize_t> dims{rows + 1, w};
    dims.insert(dims.end(), t.shape.begin(), t.shape.end());
    params.emplace_back(root, "params/" + t.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                        std::move(dims), s.partial);
    s.numel.push_back(t.numel());
    s.total_numel += t.numel();
  }
  const auto per_rank = [&](const char* name, hid_t file_type, hid_t memory_type) {
    return RowDataset(root, name, file_type, memory_type, {rows, w}, s.partial);
  };
  const auto int64s = [&](const char* name) {
    return per_rank(name, H5T_STD_I64LE, H5T_NATIVE_INT64);
  };
  const auto doubles = [&](const char* name) {
    return per_rank(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  };
  s.datasets.emplace(Datasets{
      .params = std::move(params),
      .bytes_sent = int64s("bytes_sent"),
      .bytes_received = int64s("bytes_received"),
      .payload_bytes = int64s("payload_bytes"),
      .relative_error = doubles("metrics/relative_error"),
      .cosine = doubles("metrics/cosine"),
      .cumulative_relative_error = doubles("metrics/cumulative_relative_error"),
      .measured_comm_s = doubles("metrics/measured_comm_s"),
      .codec_s = doubles("metrics/codec_s"),
      .modelled_comm_s = RowDataset(root, "metrics/modelled_comm_s", H5T_IEEE_F64LE,
                                    H5T_NATIVE_DOUBLE, {rows}, s.partial)});
  RowDataset dense(root, "dense_bytes_sent", H5T_STD_I64LE, H5T_NATIVE_INT64, {w}, s.partial);
  dense.write({}, metadata.dense_bytes_sent.data());

  std::vector<std::string> names;
  for (const TensorInfo& t : tensors) names.push_back(t.name);
  using log_detail::write_double_attribute, log_detail::write_int_attribute,
      log_detail::write_string_attribute, log_detail::write_strings_attribute;
  write_int_attribute(root, "format_version", kFormatVersion, file);
  write_string_attribute(root, "lowcomm_version", build_info().version, file);
  write_string_attribute(root, "git_revision", build_info().git_revision, file);
  write_string_attribute(root, "config", metadata.config, file);
  write_string_attribute(root, "trace", metadata.trace, file);
  write_string_attribute(root, "strategy", metadata.strategy, file);
  write_string_attribute(root, "compressor", metadata.compressor, file);
  write_string_attribute(root, "network", metadata.network, file);
  write_int_attribute(root, "world_size", world_size, file);
  write_int_attribute(root, "steps", steps, file);
  write_int_attribute(root, "seed", metadata.seed, file);
  write_double_attribute(root, "lr", metadata.lr, file);
  write_int_attribute(root, "dense_bytes", s.total_numel * 4, file);  // float32
  write_strings_attribute(root, "tensors", names, file);
}

ReplayOutput::~ReplayOutput() = default;

void ReplayOutput::write_params(std::int64_t row, int rank, std::span<const float> flat) {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  if (flat.size() != static_cast<std::size_t>(s.total_numel)) {
    throw Error(fmt::format("ReplayOutput::write_params: got {} values, the tensors hold {}",
                            flat.size(), s.total_numel));
  }
  std::size_t offset = 0;
  const hsize_t leading[2] = {static_cast<hsize_t>(row), static_cast<hsize_t>(rank)};
  for (std::size_t t = 0; t < s.numel.size(); ++t) {
    s.datasets->params[t].write(leading, flat.data() + offset);
    offset += static_cast<std::size_t>(s.numel[t]);
  }
}

void ReplayOutput::write_step(std::int64_t step, std::span<const RankStep> ranks) {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  if (ranks.size() != static_cast<std::size_t>(s.world_size)) {
    throw Error(fmt::format("ReplayOutput::write_step: got {} ranks, the output has {}",
                            ranks.size(), s.world_size));
  }
  Datasets& d = *s.datasets;
  const hsize_t row[1] = {static_cast<hsize_t>(step)};
  const auto column = [&](auto member) {
    using T = std::remove_cvref_t<decltype(ranks[0].*member)>;
    std::vector<T> values;
    for (const RankStep& r : ranks) values.push_back(r.*member);
    return values;
  };
  d.bytes_sent.write(row, column(&RankStep::bytes_sent).data());
  d.bytes_received.write(row, column(&RankStep::bytes_received).data());
  d.payload_bytes.write(row, column(&RankStep::payload_bytes).data());
  d.relative_error.write(row, column(&RankStep::relative_error).data());
  d.cosine.write(row, column(&RankStep::cosine).data());
  d.cumulative_relative_error.write(row, column(&RankStep::cumulative_relative_error).data());
  d.measured_comm_s.write(row, column(&RankStep::measured_comm_s).data());
  d.codec_s.write(row, column(&RankStep::codec_s).data());
  // Every rank is charged the same modelled time for a collective (the slowest link's), so one
  // value per step suffices; the maximum guards against a model that ever differs.
  double modelled = 0;
  for (const RankStep& r : ranks) modelled = std::max(modelled, r.modelled_comm_s);
  d.modelled_comm_s.write(row, &modelled);
}

void ReplayOutput::commit() {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  s.datasets.reset();
  check(s.file.close(), reported(s.partial), "cannot finish writing the file");
  std::error_code error;
  std::filesystem::rename(s.partial, s.out, error);
  if (error) {
    throw Error(fmt::format("replay output: cannot rename {} to {}: {}", s.partial.string(),
                            s.out.string(), error.message()));
  }
  s.remove_partial = false;
}

}  // namespace lowcomm

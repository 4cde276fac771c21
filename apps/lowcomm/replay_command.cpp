// `lowcomm replay`: pushes a recorded gradient trace through a compressor, as a data-parallel run
// would, without training: rank w reads its own gradients step by step, the ranks aggregate them
// through CompressedAllReduce on the configured network, and every rank applies plain SGD
// (x <- x - lr * aggregate) until the strategies take over. Rank 0 writes what a study of the
// compressor needs: the parameters on every rank after every step, the bytes each rank sent and
// received, and how far the aggregate is from the dense mean (docs/replay.md).
//
// The dense mean for the metrics is computed with a plain MPI_Allreduce on a communicator of its
// own, so it is not counted as traffic. The output is written to OUT.partial and renamed to OUT
// only once complete: a file named OUT is always a finished replay.
#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "lowcomm/build_info.hpp"
#include "lowcomm/comm/collective_schedule.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/log/gradient_trace.hpp"
#include "mpi_session.hpp"
#include "run_config.hpp"

namespace lowcomm::cli {

namespace {

constexpr std::int64_t kFormatVersion = 1;

struct ReplayArguments {
  ConfigArguments config;
  std::string trace;
  std::string out;
  bool force = false;
};

ConfigSchema replay_schema() {
  ConfigSchema schema;
  add_network_keys(schema);
  CompressorRegistry::global().add_config_keys(schema);
  add_replay_keys(schema);
  return schema;
}

}  // namespace

void add_replay_keys(ConfigSchema& schema) {
  schema.add({.path = "replay.lr", .type = ValueType::Float, .default_value = 0.1,
              .description = "SGD learning rate (> 0): x <- x - lr * aggregate"});
  schema.add({.path = "replay.steps", .type = ValueType::Integer,
              .description = "replay only the first N steps of the trace (default: all)",
              .min = 1.0, .optional = true});
  schema.integer("seed", 0, "shared seed given to the compressors", 0);
}

namespace {

// ---- the output file (HDF5 C API; rank 0 only) -----------------------------------------------

// One HDF5 identifier, closed with the function it was opened for.
class H5Object {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Object(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  H5Object(H5Object&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  H5Object& operator=(H5Object&& other) noexcept {
    if (this != &other) {
      close();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  H5Object(const H5Object&) = delete;
  H5Object& operator=(const H5Object&) = delete;
  ~H5Object() { close(); }
  hid_t get() const { return id_; }
  herr_t close() { return id_ < 0 ? 0 : closer_(std::exchange(id_, H5I_INVALID_HID)); }

 private:
  hid_t id_;
  Closer closer_;
};

herr_t keep_innermost(unsigned, const H5E_error2_t* error, void* cause) {
  *static_cast<std::string*>(cause) = error->desc != nullptr ? error->desc : "";
  return 0;
}

// Replay output problems are not configuration mistakes: lowcomm::Error, exit status 1.
[[noreturn]] void output_error(const std::filesystem::path& file, std::string_view what) {
  std::string cause;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &cause);
  H5Eclear2(H5E_DEFAULT);
  throw Error(fmt::format("replay output {}: {}{}", file.string(), what,
                          cause.empty() ? "" : fmt::format(" (HDF5: {})", cause)));
}

hid_t checked(hid_t id, const std::filesystem::path& file, std::string_view what) {
  if (id < 0) output_error(file, what);
  return id;
}

// A fixed-size dataset [rows, *row_shape], written one row (or one [row, rank] slice) at a time.
class RowDataset {
 public:
  RowDataset(hid_t parent, const std::string& name, hid_t file_type, hid_t memory_type,
             std::vector<hsize_t> dims, const std::filesystem::path& file)
      : dataset_(H5I_INVALID_HID, H5Dclose), memory_type_(memory_type), dims_(std::move(dims)),
        name_(name), file_(file) {
    const H5Object space(checked(H5Screate_simple(static_cast<int>(dims_.size()), dims_.data(),
                                                  nullptr),
                                 file, "cannot make a dataspace"),
                         H5Sclose);
    // Created intermediate groups (/metrics) come from the link-creation property list.
    const H5Object links(checked(H5Pcreate(H5P_LINK_CREATE), file, "cannot make properties"),
                         H5Pclose);
    H5Pset_create_intermediate_group(links.get(), 1);
    dataset_ = H5Object(checked(H5Dcreate2(parent, name.c_str(), file_type, space.get(),
                                           links.get(), H5P_DEFAULT, H5P_DEFAULT),
                                file, "cannot create " + name),
                        H5Dclose);
  }

  // Writes the block that starts at `leading` (one index per leading dimension) and spans the
  // remaining dimensions.
  void write(std::span<const hsize_t> leading, const void* data) {
    const std::string what = "cannot write " + name_;
    const H5Object space(checked(H5Dget_space(dataset_.get()), file_, what), H5Sclose);
    std::vector<hsize_t> start(dims_.size(), 0), count(dims_);
    hsize_t elements = 1;
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      if (d < leading.size()) {
        start[d] = leading[d];
        count[d] = 1;
      }
      elements *= count[d];
    }
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                            nullptr) < 0) {
      output_error(file_, what);
    }
    const H5Object memory(checked(H5Screate_simple(1, &elements, nullptr), file_, what),
                          H5Sclose);
    if (H5Dwrite(dataset_.get(), memory_type_, memory.get(), space.get(), H5P_DEFAULT, data) < 0) {
      output_error(file_, what);
    }
  }

 private:
  H5Object dataset_;
  hid_t memory_type_;
  std::vector<hsize_t> dims_;
  std::string name_;
  std::filesystem::path file_;
};

// What each rank contributes to one row of the output besides its parameters.
struct RankStep {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t payload_bytes = 0;
  double relative_error = 0;
  double cosine = 0;
  double measured_comm_s = 0;
  double modelled_comm_s = 0;
  double codec_s = 0;
};

struct OutputMetadata {
  std::string config;
  std::string trace;
  std::string compressor;
  std::string network;
  std::int64_t seed;
  double lr;
  std::vector<std::int64_t> dense_bytes_sent;  // per rank and step with compressor none
};

// OUT.partial while it is written; renamed to OUT by commit(), removed when destroyed uncommitted.
class ReplayOutput {
 public:
  ReplayOutput(std::filesystem::path out, const std::vector<TraceTensor>& tensors, int world_size,
               std::int64_t steps, const OutputMetadata& metadata)
      : out_(std::move(out)), partial_(out_.string() + ".partial"),
        file_(checked(H5Fcreate(partial_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                      partial_, "cannot create the file; check that its folder exists and is "
                                "writable"),
              H5Fclose) {
    const hid_t root = file_.get();
    const auto w = static_cast<hsize_t>(world_size), rows = static_cast<hsize_t>(steps);
    for (const TraceTensor& t : tensors) {
      std::vector<hsize_t> dims{rows + 1, w};
      dims.insert(dims.end(), t.shape.begin(), t.shape.end());
      params_.emplace_back(root, "params/" + t.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                           std::move(dims), partial_);
    }
    const auto per_rank = [&](const char* name, hid_t file_type, hid_t memory_type) {
      return RowDataset(root, name, file_type, memory_type, {rows, w}, partial_);
    };
    bytes_sent_.emplace(per_rank("bytes_sent", H5T_STD_I64LE, H5T_NATIVE_INT64));
    bytes_received_.emplace(per_rank("bytes_received", H5T_STD_I64LE, H5T_NATIVE_INT64));
    payload_bytes_.emplace(per_rank("payload_bytes", H5T_STD_I64LE, H5T_NATIVE_INT64));
    relative_error_.emplace(per_rank("metrics/relative_error", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE));
    cosine_.emplace(per_rank("metrics/cosine", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE));
    measured_.emplace(per_rank("metrics/measured_comm_s", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE));
    codec_.emplace(per_rank("metrics/codec_s", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE));
    modelled_.emplace(root, "metrics/modelled_comm_s", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                      std::vector<hsize_t>{rows}, partial_);
    RowDataset dense(root, "dense_bytes_sent", H5T_STD_I64LE, H5T_NATIVE_INT64, {w}, partial_);
    dense.write({}, metadata.dense_bytes_sent.data());

    std::vector<std::string> names;
    for (const TraceTensor& t : tensors) names.push_back(t.name);
    std::int64_t dense_bytes = 0;
    for (const TraceTensor& t : tensors) dense_bytes += t.numel() * 4;
    write_int("format_version", kFormatVersion);
    write_string("lowcomm_version", build_info().version);
    write_string("git_revision", build_info().git_revision);
    write_string("config", metadata.config);
    write_string("trace", metadata.trace);
    write_string("compressor", metadata.compressor);
    write_string("network", metadata.network);
    write_int("world_size", world_size);
    write_int("steps", steps);
    write_int("seed", metadata.seed);
    write_double("lr", metadata.lr);
    write_int("dense_bytes", dense_bytes);
    write_strings("tensors", names);
  }

  ReplayOutput(const ReplayOutput&) = delete;
  ReplayOutput& operator=(const ReplayOutput&) = delete;

  ~ReplayOutput() {
    if (committed_) return;
    close_datasets();
    file_.close();
    std::error_code ignored;
    std::filesystem::remove(partial_, ignored);
  }

  // Parameters of rank `rank` after `row` steps (row 0: the initial values), all tensors
  // concatenated in order.
  void write_params(std::int64_t row, int rank, std::span<const float> flat) {
    std::size_t offset = 0;
    const hsize_t leading[2] = {static_cast<hsize_t>(row), static_cast<hsize_t>(rank)};
    for (std::size_t t = 0; t < params_.size(); ++t) {
      params_[t].write(leading, flat.data() + offset);
      offset += static_cast<std::size_t>(numel_[t]);
    }
  }
  void set_numel(std::vector<std::int64_t> numel) { numel_ = std::move(numel); }

  // One step's values of every rank, in rank order.
  void write_step(std::int64_t step, std::span<const RankStep> ranks) {
    const hsize_t row[1] = {static_cast<hsize_t>(step)};
    const auto column = [&](auto member) {
      using T = std::remove_cvref_t<decltype(ranks[0].*member)>;
      std::vector<T> values;
      for (const RankStep& r : ranks) values.push_back(r.*member);
      return values;
    };
    bytes_sent_->write(row, column(&RankStep::bytes_sent).data());
    bytes_received_->write(row, column(&RankStep::bytes_received).data());
    payload_bytes_->write(row, column(&RankStep::payload_bytes).data());
    relative_error_->write(row, column(&RankStep::relative_error).data());
    cosine_->write(row, column(&RankStep::cosine).data());
    measured_->write(row, column(&RankStep::measured_comm_s).data());
    codec_->write(row, column(&RankStep::codec_s).data());
    // Every rank is charged the same modelled time for a collective (the slowest link's), so
    // one value per step suffices; the maximum guards against a model that ever differs.
    double modelled = 0;
    for (const RankStep& r : ranks) modelled = std::max(modelled, r.modelled_comm_s);
    modelled_->write(row, &modelled);
  }

  // Closes the file, checking that its last writes succeeded, and gives it its final name.
  void commit() {
    close_datasets();
    if (file_.close() < 0) output_error(partial_, "cannot finish writing the file");
    std::error_code error;
    std::filesystem::rename(partial_, out_, error);
    if (error) {
      throw Error(fmt::format("replay output: cannot rename {} to {}: {}", partial_.string(),
                              out_.string(), error.message()));
    }
    committed_ = true;
  }

 private:
  template <class T>
  void write_attribute(const char* name, hid_t file_type, hid_t memory_type, const T& value) {
    const H5Object space(checked(H5Screate(H5S_SCALAR), partial_, "cannot make a dataspace"),
                         H5Sclose);
    const H5Object attribute(checked(H5Acreate2(file_.get(), name, file_type, space.get(),
                                                H5P_DEFAULT, H5P_DEFAULT),
                                     partial_, fmt::format("cannot write attribute '{}'", name)),
                             H5Aclose);
    if (H5Awrite(attribute.get(), memory_type, &value) < 0) {
      output_error(partial_, fmt::format("cannot write attribute '{}'", name));
    }
  }
  H5Object string_type() {
    H5Object type(checked(H5Tcopy(H5T_C_S1), partial_, "cannot make a string type"), H5Tclose);
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);  // h5py reads variable-length UTF-8 as str
    return type;
  }
  void write_int(const char* name, std::int64_t value) {
    write_attribute(name, H5T_STD_I64LE, H5T_NATIVE_INT64, value);
  }
  void write_double(const char* name, double value) {
    write_attribute(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, value);
  }
  void write_string(const char* name, std::string_view value) {
    const std::string text(value);
    const char* data = text.c_str();
    const H5Object type = string_type();
    write_attribute(name, type.get(), type.get(), data);
  }
  void write_strings(const char* name, const std::vector<std::string>& values) {
    const H5Object type = string_type();
    const hsize_t count = values.size();
    const H5Object space(checked(H5Screate_simple(1, &count, nullptr), partial_,
                                 "cannot make a dataspace"),
                         H5Sclose);
    const H5Object attribute(checked(H5Acreate2(file_.get(), name, type.get(), space.get(),
                                                H5P_DEFAULT, H5P_DEFAULT),
                                     partial_, fmt::format("cannot write attribute '{}'", name)),
                             H5Aclose);
    std::vector<const char*> data;
    for (const std::string& value : values) data.push_back(value.c_str());
    if (H5Awrite(attribute.get(), type.get(), data.data()) < 0) {
      output_error(partial_, fmt::format("cannot write attribute '{}'", name));
    }
  }

  // Datasets must be closed before the file, whose close writes them out.
  void close_datasets() {
    params_.clear();
    for (auto* dataset : {&bytes_sent_, &bytes_received_, &payload_bytes_, &relative_error_,
                          &cosine_, &measured_, &codec_, &modelled_}) {
      dataset->reset();
    }
  }

  std::filesystem::path out_, partial_;
  H5Object file_;
  std::vector<RowDataset> params_;
  std::vector<std::int64_t> numel_;
  std::optional<RowDataset> bytes_sent_, bytes_received_, payload_bytes_, relative_error_,
      cosine_, measured_, codec_, modelled_;
  bool committed_ = false;
};

// ---- the replay ------------------------------------------------------------------------------

// How far the compressor's aggregate is from the dense mean, over all tensors at once.
// relative_error = |a - m| / |m|; cosine = a.m / (|a| |m|). A zero mean makes both undefined:
// an exact (zero) aggregate then counts as relative error 0 and cosine 1, any other as
// relative error +inf and cosine 0; a zero aggregate of a non-zero mean has cosine 0.
std::pair<double, double> compare(std::span<const float> aggregate, std::span<const float> mean) {
  double diff2 = 0, mean2 = 0, agg2 = 0, dot = 0;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    const double a = aggregate[i], m = mean[i];
    diff2 += (a - m) * (a - m);
    mean2 += m * m;
    agg2 += a * a;
    dot += a * m;
  }
  if (mean2 == 0) {
    return agg2 == 0 ? std::pair{0.0, 1.0}
                     : std::pair{std::numeric_limits<double>::infinity(), 0.0};
  }
  const double relative_error = std::sqrt(diff2 / mean2);
  const double cosine = agg2 == 0 ? 0.0 : dot / (std::sqrt(agg2) * std::sqrt(mean2));
  return {relative_error, cosine};
}

// What each rank would send per step without compression: one fused float32 all-reduce of the
// whole model by the configured algorithm (what compressor `none` at any granularity sends).
std::vector<std::int64_t> dense_bytes_sent(const CommunicatorOptions& options, int world_size,
                                           std::uint64_t count) {
  std::vector<std::int64_t> sent(static_cast<std::size_t>(world_size), 0);
  all_reduce_rounds(options.all_reduce_algorithm, world_size, count, sizeof(float),
                    [&](std::span<const Transfer> round) {
                      for (const Transfer& t : round) {
                        const auto source = static_cast<std::size_t>(t.source);
                        sent[source] += static_cast<std::int64_t>(t.bytes);
                      }
                    });
  return sent;
}

std::vector<std::span<float>> views(std::vector<float>& flat, std::span<const TensorInfo> tensors) {
  std::vector<std::span<float>> spans;
  std::size_t offset = 0;
  for (const TensorInfo& t : tensors) {
    spans.push_back(std::span(flat).subspan(offset, static_cast<std::size_t>(t.numel())));
    offset += static_cast<std::size_t>(t.numel());
  }
  return spans;
}

int run(const ReplayArguments& arguments) {
  return run_with_mpi([&](MpiSession& mpi) {
    // HDF5 would print its error stack; failures are reported as exceptions instead.
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const ConfigSchema schema = replay_schema();
    const Config config = load_config_on_all_ranks(arguments.config, schema, MPI_COMM_WORLD);
    const int w = mpi.size(), rank = mpi.rank();

    std::optional<GradientTraceReader> trace;
    std::int64_t steps = 0;
    agree_on_failure(MPI_COMM_WORLD, [&] {
      // Inclusive schema bounds cannot say "> 0".
      if (!(config.get_double("replay.lr") > 0)) {
        throw ConfigError(fmt::format("replay.lr = {} must be positive",
                                      config.get_double("replay.lr")));
      }
      trace.emplace(arguments.trace);
      if (trace->world_size() != w) {
        throw ConfigError(fmt::format(
            "the trace {} was recorded by {} ranks (its world_size attribute) but this job has "
            "{}: start it with mpiexec -n {}", arguments.trace, trace->world_size(), w,
            trace->world_size()));
      }
      steps = trace->steps();
      if (steps == 0) throw Error(fmt::format("the trace {} holds no steps", arguments.trace));
      if (config.has("replay.steps")) {
        const std::int64_t wanted = config.get_int("replay.steps");
        if (wanted > steps) {
          throw ConfigError(fmt::format("replay.steps = {} but the trace {} holds {} steps: "
                                        "lower replay.steps or leave it unset", wanted,
                                        arguments.trace, steps));
        }
        steps = wanted;
      }
    });

    std::vector<TensorInfo> tensors;
    std::vector<std::int64_t> numel;
    std::int64_t total = 0;
    for (const TraceTensor& t : trace->tensors()) {
      tensors.push_back({t.name, t.shape});
      numel.push_back(t.numel());
      total += t.numel();
    }
    const auto n = static_cast<std::size_t>(total);

    std::optional<Communicator> comm;
    std::optional<CompressedAllReduce> sync;
    const std::string compressor_name = config.get_string("compressor.name");
    agree_on_failure(MPI_COMM_WORLD, [&] {
      if (total > INT_MAX) {
        throw Error(fmt::format("the trace's tensors hold {} values per rank; replay handles at "
                                "most {} (one MPI message)", total, INT_MAX));
      }
      comm.emplace(MPI_COMM_WORLD, communicator_options_from_config(config, w));
      const double bucket_mb = config.get_double("compressor.bucket_mb");
      const auto bucket_bytes = std::max<std::uint64_t>(
          1, static_cast<std::uint64_t>(std::llround(bucket_mb * 1024.0 * 1024.0)));
      sync.emplace(*comm, CompressorRegistry::global().create(config), tensors,
                   parse_granularity(config.get_string("compressor.granularity")), bucket_bytes,
                   static_cast<std::uint64_t>(config.get_int("seed")));
    });

    std::vector<float> params(n), grads(n), aggregate(n), mean(n), received;
    const std::vector<std::span<float>> param_views = views(params, tensors);
    const std::vector<std::span<float>> grad_views = views(grads, tensors);
    const std::vector<std::span<float>> aggregate_views = views(aggregate, tensors);
    const std::vector<std::span<const float>> grad_inputs(grad_views.begin(), grad_views.end());
    agree_on_failure(MPI_COMM_WORLD, [&] {
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        trace->read_initial_values(t, param_views[t]);
      }
    });

    std::optional<ReplayOutput> output;
    const std::vector<std::int64_t> dense_sent = dense_bytes_sent(comm->options(), w, n);
    on_rank_zero_agreed(MPI_COMM_WORLD, [&] {
      const std::filesystem::path out(arguments.out);
      std::error_code error;
      if (std::filesystem::equivalent(out, arguments.trace, error)) {
        throw ConfigError(fmt::format("--out {} is the trace itself: choose another path",
                                      arguments.out));
      }
      if (std::filesystem::exists(out, error) && !arguments.force) {
        throw ConfigError(fmt::format("--out {} exists: pass --force to replace it, or choose "
                                      "another path", arguments.out));
      }
      const OutputMetadata metadata{
          .config = config.to_toml(),
          .trace = std::filesystem::absolute(arguments.trace).string(),
          .compressor = compressor_name,
          .network = describe_network(config),
          .seed = config.get_int("seed"),
          .lr = config.get_double("replay.lr"),
          .dense_bytes_sent = dense_sent};
      output.emplace(out, trace->tensors(), w, steps, metadata);
      output->set_numel(numel);
      // Every rank starts from the same values, read from the same file.
      for (int r = 0; r < w; ++r) output->write_params(0, r, params);
    });

    MPI_Comm raw = MPI_COMM_NULL;  // the dense mean and the gathers to rank 0: not counted
    MPI_Comm_dup(MPI_COMM_WORLD, &raw);
    const float lr = static_cast<float>(config.get_double("replay.lr"));
    const int count = static_cast<int>(n);
    std::vector<RankStep> all_steps(static_cast<std::size_t>(w));
    double sum_relative_error = 0, sum_cosine = 0, sum_sent = 0;
    if (rank == 0) received.resize(n);

    for (std::int64_t step = 0; step < steps; ++step) {
      agree_on_failure(MPI_COMM_WORLD, [&] { trace->read_gradients(step, rank, grad_views); });
      const SyncReport report = sync->run(static_cast<std::uint64_t>(step), grad_inputs,
                                          aggregate_views);
      comm->synchronize_clock();

      MPI_Allreduce(grads.data(), mean.data(), count, MPI_FLOAT, MPI_SUM, raw);
      const auto ranks = static_cast<float>(w);  // divided as compressor none divides its sum
      for (float& m : mean) m /= ranks;
      const auto [relative_error, cosine] = compare(aggregate, mean);
      for (std::size_t i = 0; i < n; ++i) params[i] -= lr * aggregate[i];

      const RankStep mine{.bytes_sent = static_cast<std::int64_t>(report.comm.bytes_sent),
                          .bytes_received = static_cast<std::int64_t>(report.comm.bytes_received),
                          .payload_bytes = static_cast<std::int64_t>(report.payload_bytes),
                          .relative_error = relative_error,
                          .cosine = cosine,
                          .measured_comm_s = report.comm.measured_s,
                          .modelled_comm_s = report.comm.modelled_s,
                          .codec_s = report.codec_s};
      MPI_Gather(&mine, sizeof(RankStep), MPI_BYTE, all_steps.data(), sizeof(RankStep), MPI_BYTE,
                 0, raw);
      if (rank != 0) MPI_Send(params.data(), count, MPI_FLOAT, 0, 0, raw);
      on_rank_zero_agreed(MPI_COMM_WORLD, [&] {
        // Receive from every rank even after a failed write, or the senders would wait forever.
        std::exception_ptr failure;
        for (int r = 0; r < w; ++r) {
          if (r != 0) MPI_Recv(received.data(), count, MPI_FLOAT, r, 0, raw, MPI_STATUS_IGNORE);
          if (failure) continue;
          try {
            output->write_params(step + 1, r, r == 0 ? params : received);
          } catch (...) {
            failure = std::current_exception();
          }
        }
        if (failure) std::rethrow_exception(failure);
        output->write_step(step, all_steps);
      });
      for (const RankStep& r : all_steps) {
        sum_relative_error += r.relative_error;
        sum_cosine += r.cosine;
        sum_sent += static_cast<double>(r.bytes_sent);
      }
    }
    MPI_Comm_free(&raw);

    on_rank_zero_agreed(MPI_COMM_WORLD, [&] { output->commit(); });
    if (rank == 0) {
      const double cells = static_cast<double>(steps) * w;
      const double dense_mean =
          std::accumulate(dense_sent.begin(), dense_sent.end(), 0.0) / static_cast<double>(w);
      std::printf("lowcomm replay: %lld steps of %d rank%s through compressor '%s' (%s); "
                  "network %s\n", static_cast<long long>(steps), w, w == 1 ? "" : "s",
                  compressor_name.c_str(), config.get_string("compressor.granularity").c_str(),
                  describe_network(config).c_str());
      std::printf("  bytes sent per rank and step: %.0f (dense float32 all-reduce: %.0f%s)\n",
                  sum_sent / cells, dense_mean,
                  dense_mean > 0
                      ? fmt::format("; ratio {:.3g}", sum_sent / cells / dense_mean).c_str()
                      : "");
      std::printf("  against the dense mean: relative error %.4g, cosine %.4g (mean over steps "
                  "and ranks)\n", sum_relative_error / cells, sum_cosine / cells);
      std::printf("  wrote %s\n", std::filesystem::absolute(arguments.out).c_str());
    }
  });
}

}  // namespace

void add_replay_command(CLI::App& app) {
  CLI::App* replay = app.add_subcommand(
      "replay", "Replay a recorded gradient trace through a compressor (plain SGD), recording "
                "parameters, bytes and reconstruction error");
  static ReplayArguments arguments;  // CLI11 binds options to storage that outlives parsing
  replay->add_option("--trace", arguments.trace,
                     "HDF5 gradient trace: /params/<name>, /grads/<name> [steps, W, *shape], "
                     "attribute world_size (docs/replay.md)")
      ->required()
      ->type_name("IN.h5");
  replay->add_option("--out", arguments.out, "HDF5 file to write (docs/replay.md)")
      ->required()
      ->type_name("OUT.h5");
  replay->add_flag("--force", arguments.force, "replace --out if it exists");
  add_config_arguments(*replay, arguments.config);
  replay->footer("Keys: network.*, compressor.*, replay.lr (0.1), replay.steps (all), seed (0); "
                 "`lowcomm info` lists network and compressor keys.");
  replay->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

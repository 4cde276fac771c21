#include "lowcomm/log/gradient_trace.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>

#include "hdf5_attributes.hpp"
#include "checksummed.hpp"
#include "hdf5_handle.hpp"

namespace lowcomm {

namespace {

using log_detail::checksummed_creation;
using log_detail::Hdf5Id;
using log_detail::kChecksumAdvice;
using log_detail::SilenceHdf5Errors;

[[noreturn]] void fail(const std::filesystem::path& file, std::string_view what) {
  const std::string cause = log_detail::hdf5_error_cause();
  H5Eclear2(H5E_DEFAULT);
  std::string message = fmt::format("gradient trace {}: {}", file.string(), what);
  if (!cause.empty()) message += fmt::format(" (HDF5: {})", cause);
  throw TraceError(message);
}

template <std::signed_integral Status>
Status check(Status status, const std::filesystem::path& file, std::string_view what) {
  if (status < 0) fail(file, what);
  return status;
}

// "[4, 3, 5, 7]", as numpy prints shapes (without its trailing comma for one dimension).
std::string shape_text(std::span<const std::int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::vector<std::int64_t> dataset_shape(hid_t dataset, const std::filesystem::path& file,
                                        const std::string& name) {
  const Hdf5Id space(check(H5Dget_space(dataset), file, "cannot read the shape of " + name),
                     H5Sclose);
  const int rank = check(H5Sget_simple_extent_ndims(space.get()), file,
                         "cannot read the shape of " + name);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), file,
        "cannot read the shape of " + name);
  return {dims.begin(), dims.end()};
}

void require_float_data(hid_t dataset, const std::filesystem::path& file, const std::string& name) {
  const Hdf5Id type(check(H5Dget_type(dataset), file, "cannot read the type of " + name),
                    H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT) {
    fail(file, fmt::format("{} does not hold floating-point numbers; store it as float32 "
                           "(numpy: .astype(np.float32))", name));
  }
}

herr_t collect_name(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

// The names of the members of `group` (which must all be datasets), sorted byte-wise.
std::vector<std::string> dataset_names(hid_t group, const std::filesystem::path& file,
                                       const std::string& group_name) {
  std::vector<std::string> names;
  check(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names), file,
        "cannot list " + group_name);
  std::ranges::sort(names);
  for (const std::string& name : names) {
    const Hdf5Id object(check(H5Oopen(group, name.c_str(), H5P_DEFAULT), file,
                              fmt::format("cannot open {}/{}", group_name, name)),
                        H5Oclose);
    if (H5Iget_type(object.get()) != H5I_DATASET) {
      fail(file, fmt::format("{}/{} is not a dataset: tensors must be datasets directly under "
                             "{} (nested groups are not supported; flatten names, e.g. "
                             "'layer0.weight')", group_name, name, group_name));
    }
  }
  return names;
}

Hdf5Id open_group(hid_t file_id, const char* name, const std::filesystem::path& file) {
  const std::string what = fmt::format("cannot open {}", name);
  if (check(H5Lexists(file_id, name, H5P_DEFAULT), file, what) <= 0) {
    fail(file, fmt::format("has no {} group; a trace holds /params/<name> (initial values), "
                           "/grads/<name> ([steps, world_size, *shape]) and a world_size "
                           "attribute (docs/replay.md)", name));
  }
  return Hdf5Id(check(H5Gopen2(file_id, name, H5P_DEFAULT), file, what), H5Gclose);
}

// Reads or writes one [step, rank] slice of a [steps, world_size, *shape] dataset.
void transfer_slice(hid_t dataset, std::int64_t step, int rank, std::int64_t numel,
                    std::span<const std::int64_t> shape, float* data, bool write,
                    const std::filesystem::path& file, const std::string& name) {
  const std::string what = fmt::format("cannot {} step {} of rank {} in {}",
                                       write ? "write" : "read", step, rank, name);
  const Hdf5Id space(check(H5Dget_space(dataset), file, what), H5Sclose);
  std::vector<hsize_t> start(shape.size() + 2, 0), count(shape.size() + 2, 1);
  start[0] = static_cast<hsize_t>(step);
  start[1] = static_cast<hsize_t>(rank);
  std::copy(shape.begin(), shape.end(), count.begin() + 2);
  check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                            nullptr),
        file, what);
  const hsize_t elements = static_cast<hsize_t>(numel);
  const Hdf5Id memory(check(H5Screate_simple(1, &elements, nullptr), file, what), H5Sclose);
  if (write) {
    check(H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory.get(), space.get(), H5P_DEFAULT, data), file,
          what);
  } else {
    check(H5Dread(dataset, H5T_NATIVE_FLOAT, memory.get(), space.get(), H5P_DEFAULT, data), file,
          fmt::format("{}; {}", what, kChecksumAdvice));
  }
}

void require_sizes(std::span<const TensorInfo> tensors, std::size_t spans,
                   const auto& size_of, std::string_view what) {
  if (spans != tensors.size()) {
    throw TraceError(
        fmt::format("{}: got {} tensors, the trace has {}", what, spans, tensors.size()));
  }
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    if (size_of(t) != static_cast<std::size_t>(tensors[t].numel())) {
      throw TraceError(fmt::format("{}: tensor '{}' has {} elements, got {}", what, tensors[t].name,
                                   tensors[t].numel(), size_of(t)));
    }
  }
}

}  // namespace


// ---- reader ----------------------------------------------------------------------------------

struct GradientTraceReader::State {
  std::filesystem::path file;
  Hdf5Id file_id;
  int world_size = 0;
  std::int64_t steps = 0;
  std::vector<TensorInfo> tensors;
  std::vector<Hdf5Id> params;  // one dataset per tensor, open for the whole replay
  std::vector<Hdf5Id> grads;
};

GradientTraceReader::GradientTraceReader(const std::filesystem::path& file)
    : state_(std::make_unique<State>()) {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  s.file = file;
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    fail(file, std::filesystem::exists(file, error) ? "is not a regular file"
                                                   : "no such file; check the --trace path");
  }
  s.file_id = Hdf5Id(check(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), file,
                           "cannot open it as HDF5; is it an HDF5 file?"),
                     H5Fclose);

  std::optional<std::int64_t> world;
  try {
    world = log_detail::read_int_attribute(s.file_id.get(), "world_size", file);
  } catch (const LogError&) {
    fail(file, "the world_size attribute must be one integer (h5py: f.attrs['world_size'] = W)");
  }
  if (!world) {
    fail(file, "has no world_size attribute on the root group; set it to the number of ranks "
               "that recorded the gradients (h5py: f.attrs['world_size'] = W)");
  }
  if (*world < 1 || *world > (1 << 24)) {
    fail(file, fmt::format("world_size attribute is {}; it must be the (positive) number of "
                           "ranks that recorded the gradients", *world));
  }
  s.world_size = static_cast<int>(*world);

  const Hdf5Id params = open_group(s.file_id.get(), "/params", file);
  const Hdf5Id grads = open_group(s.file_id.get(), "/grads", file);
  const std::vector<std::string> names = dataset_names(params.get(), file, "/params");
  const std::vector<std::string> grad_names = dataset_names(grads.get(), file, "/grads");
  if (names.empty()) fail(file, "/params holds no tensors");
  for (const std::string& name : grad_names) {
    if (!std::ranges::binary_search(names, name)) {
      fail(file, fmt::format("/grads/{} has no initial values: add /params/{} or remove it", name,
                             name));
    }
  }

  std::optional<std::string> steps_from;  // the first tensor, to name it in a mismatch
  for (const std::string& name : names) {
    const std::string param_name = "/params/" + name, grad_name = "/grads/" + name;
    Hdf5Id param(check(H5Dopen2(params.get(), name.c_str(), H5P_DEFAULT), file,
                       "cannot open " + param_name),
                 H5Dclose);
    require_float_data(param.get(), file, param_name);
    TensorInfo tensor{name, dataset_shape(param.get(), file, param_name)};
    if (tensor.numel() == 0) fail(file, fmt::format("{} has no elements ({})", param_name,
                                                    shape_text(tensor.shape)));
    if (!std::ranges::binary_search(grad_names, name)) {
      fail(file, fmt::format("{} has no gradients: add {} of shape [steps, {}{}{}]", param_name,
                             grad_name, s.world_size, tensor.shape.empty() ? "" : ", ",
                             fmt::join(tensor.shape, ", ")));
    }
    Hdf5Id grad(check(H5Dopen2(grads.get(), name.c_str(), H5P_DEFAULT), file,
                      "cannot open " + grad_name),
                H5Dclose);
    require_float_data(grad.get(), file, grad_name);
    const std::vector<std::int64_t> grad_shape = dataset_shape(grad.get(), file, grad_name);
    const bool fits = grad_shape.size() == tensor.shape.size() + 2 &&
                      grad_shape[1] == s.world_size &&
                      std::equal(tensor.shape.begin(), tensor.shape.end(), grad_shape.begin() + 2);
    if (!fits) {
      fail(file, fmt::format("{} has shape {}; expected [steps, {}{}{}]: one gradient per step "
                             "and rank (world_size = {}) in the shape of {} {}", grad_name,
                             shape_text(grad_shape), s.world_size,
                             tensor.shape.empty() ? "" : ", ", fmt::join(tensor.shape, ", "),
                             s.world_size, param_name, shape_text(tensor.shape)));
    }
    if (!steps_from) {
      s.steps = grad_shape[0];
      steps_from = grad_name;
    } else if (grad_shape[0] != s.steps) {
      fail(file, fmt::format("{} holds {} steps but {} holds {}: every tensor needs the same "
                             "steps", grad_name, grad_shape[0], *steps_from, s.steps));
    }
    s.tensors.push_back(std::move(tensor));
    s.params.push_back(std::move(param));
    s.grads.push_back(std::move(grad));
  }
}

GradientTraceReader::~GradientTraceReader() = default;
GradientTraceReader::GradientTraceReader(GradientTraceReader&&) noexcept = default;
GradientTraceReader& GradientTraceReader::operator=(GradientTraceReader&&) noexcept = default;

const std::filesystem::path& GradientTraceReader::path() const { return state_->file; }
int GradientTraceReader::world_size() const { return state_->world_size; }
std::int64_t GradientTraceReader::steps() const { return state_->steps; }
const std::vector<TensorInfo>& GradientTraceReader::tensors() const { return state_->tensors; }

void GradientTraceReader::read_initial_values(std::size_t tensor, std::span<float> out) const {
  const SilenceHdf5Errors silence;
  const State& s = *state_;
  if (tensor >= s.tensors.size()) {
    throw TraceError(fmt::format("read_initial_values: tensor {} of {}", tensor, s.tensors.size()));
  }
  if (out.size() != static_cast<std::size_t>(s.tensors[tensor].numel())) {
    throw TraceError(fmt::format("read_initial_values: '{}' has {} elements, the output {}",
                                 s.tensors[tensor].name, s.tensors[tensor].numel(), out.size()));
  }
  check(H5Dread(s.params[tensor].get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                out.data()),
        s.file, fmt::format("cannot read /params/{}; {}", s.tensors[tensor].name, kChecksumAdvice));
}

void GradientTraceReader::read_gradients(std::int64_t step, int rank,
                                         std::span<const std::span<float>> out) const {
  const SilenceHdf5Errors silence;
  const State& s = *state_;
  if (step < 0 || step >= s.steps || rank < 0 || rank >= s.world_size) {
    throw TraceError(fmt::format("read_gradients: step {} of rank {} is outside the trace ({} "
                                 "steps, {} ranks)", step, rank, s.steps, s.world_size));
  }
  require_sizes(s.tensors, out.size(), [&](std::size_t t) { return out[t].size(); },
                "read_gradients");
  for (std::size_t t = 0; t < s.tensors.size(); ++t) {
    transfer_slice(s.grads[t].get(), step, rank, s.tensors[t].numel(), s.tensors[t].shape,
                   out[t].data(), false, s.file, "/grads/" + s.tensors[t].name);
  }
}

// ---- writer ----------------------------------------------------------------------------------

struct GradientTraceWriter::State {
  std::filesystem::path file;
  Hdf5Id file_id;
  int world_size = 0;
  std::int64_t steps = 0;
  std::vector<TensorInfo> tensors;
  std::vector<Hdf5Id> grads;
};

GradientTraceWriter::GradientTraceWriter(const std::filesystem::path& file, int world_size,
                                         std::vector<TensorInfo> tensors,
                                         std::span<const std::span<const float>> initial_values)
    : state_(std::make_unique<State>()) {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  s.file = file;
  s.world_size = world_size;
  if (world_size < 1) {
    throw TraceError(fmt::format("a trace needs world_size >= 1, got {}", world_size));
  }
  if (tensors.empty()) throw TraceError("a trace needs at least one tensor");
  std::set<std::string> seen;
  for (const TensorInfo& t : tensors) {
    if (t.name.empty() || t.name == "." || t.name.find('/') != std::string::npos) {
      throw TraceError(fmt::format("tensor name '{}' cannot name an HDF5 dataset: use a "
                                   "non-empty name without '/'", t.name));
    }
    if (!seen.insert(t.name).second) {
      throw TraceError(fmt::format("tensor '{}' appears twice", t.name));
    }
    if (t.numel() <= 0) throw TraceError(fmt::format("tensor '{}' has no elements", t.name));
  }
  require_sizes(tensors, initial_values.size(),
                [&](std::size_t t) { return initial_values[t].size(); }, "GradientTraceWriter");
  s.tensors = std::move(tensors);

  s.file_id = Hdf5Id(check(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), file,
                           "cannot create the file; check that its folder exists and is writable"),
                     H5Fclose);
  log_detail::write_int_attribute(s.file_id.get(), "world_size", world_size, file);
  const Hdf5Id params(check(H5Gcreate2(s.file_id.get(), "/params", H5P_DEFAULT, H5P_DEFAULT,
                                       H5P_DEFAULT), file, "cannot create /params"),
                      H5Gclose);
  const Hdf5Id grads(check(H5Gcreate2(s.file_id.get(), "/grads", H5P_DEFAULT, H5P_DEFAULT,
                                      H5P_DEFAULT), file, "cannot create /grads"),
                     H5Gclose);
  for (std::size_t i = 0; i < s.tensors.size(); ++i) {
    const TensorInfo& t = s.tensors[i];
    const std::vector<hsize_t> dims(t.shape.begin(), t.shape.end());
    const Hdf5Id space(check(dims.empty() ? H5Screate(H5S_SCALAR)
                                          : H5Screate_simple(static_cast<int>(dims.size()),
                                                             dims.data(), nullptr),
                             file, "cannot make a dataspace"),
                       H5Sclose);
    // One chunk, checksummed (checksummed.hpp); a scalar or an empty tensor cannot be chunked.
    const bool chunkable = !dims.empty() && t.numel() > 0;
    const Hdf5Id param_creation(check(chunkable ? checksummed_creation(dims) : H5Pcreate(H5P_DATASET_CREATE),
                                      file, "cannot make properties for /params/" + t.name),
                                H5Pclose);
    const Hdf5Id param(check(H5Dcreate2(params.get(), t.name.c_str(), H5T_IEEE_F32LE, space.get(),
                                        H5P_DEFAULT, param_creation.get(), H5P_DEFAULT),
                             file, "cannot create /params/" + t.name),
                       H5Dclose);
    check(H5Dwrite(param.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                   initial_values[i].data()),
          file, "cannot write /params/" + t.name);

    // Chunks of one rank's slice, several steps deep for small tensors (about 64 KiB), so that
    // a reader's [step, rank] read touches one chunk and small tensors do not make tiny chunks.
    const auto bytes = static_cast<std::uint64_t>(t.numel()) * sizeof(float);
    if (bytes > (std::uint64_t{1} << 32) - 1) {
      throw TraceError(fmt::format("tensor '{}' ({} bytes) exceeds HDF5's 4 GiB chunk limit",
                                   t.name, bytes));
    }
    const hsize_t depth = std::clamp<std::uint64_t>((std::uint64_t{64} << 10) / bytes, 1, 1024);
    std::vector<hsize_t> grad_dims{0, static_cast<hsize_t>(world_size)}, max_dims, chunk{depth, 1};
    grad_dims.insert(grad_dims.end(), dims.begin(), dims.end());
    chunk.insert(chunk.end(), dims.begin(), dims.end());
    max_dims = grad_dims;
    max_dims[0] = H5S_UNLIMITED;
    const Hdf5Id grad_space(check(H5Screate_simple(static_cast<int>(grad_dims.size()),
                                                   grad_dims.data(), max_dims.data()),
                                  file, "cannot make a dataspace"),
                            H5Sclose);
    const Hdf5Id properties(check(checksummed_creation(chunk), file,
                                  "cannot set the chunk shape and checksum of /grads/" + t.name),
                            H5Pclose);
    s.grads.emplace_back(check(H5Dcreate2(grads.get(), t.name.c_str(), H5T_IEEE_F32LE,
                                          grad_space.get(), H5P_DEFAULT, properties.get(),
                                          H5P_DEFAULT),
                               file, "cannot create /grads/" + t.name),
                         H5Dclose);
  }
}

GradientTraceWriter::~GradientTraceWriter() = default;
GradientTraceWriter::GradientTraceWriter(GradientTraceWriter&&) noexcept = default;
GradientTraceWriter& GradientTraceWriter::operator=(GradientTraceWriter&&) noexcept = default;

std::int64_t GradientTraceWriter::steps() const { return state_->steps; }

std::int64_t GradientTraceWriter::add_step() {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  if (s.file_id.get() < 0) throw TraceError("add_step: the trace is closed");
  for (std::size_t t = 0; t < s.tensors.size(); ++t) {
    std::vector<hsize_t> dims{static_cast<hsize_t>(s.steps + 1),
                              static_cast<hsize_t>(s.world_size)};
    dims.insert(dims.end(), s.tensors[t].shape.begin(), s.tensors[t].shape.end());
    check(H5Dset_extent(s.grads[t].get(), dims.data()), s.file,
          "cannot extend /grads/" + s.tensors[t].name);
  }
  return s.steps++;
}

void GradientTraceWriter::write_gradients(std::int64_t step, int rank,
                                          std::span<const std::span<const float>> gradients) {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  if (s.file_id.get() < 0) throw TraceError("write_gradients: the trace is closed");
  if (step < 0 || step >= s.steps || rank < 0 || rank >= s.world_size) {
    throw TraceError(fmt::format("write_gradients: step {} of rank {} is outside the trace ({} "
                                 "steps added, {} ranks)", step, rank, s.steps, s.world_size));
  }
  require_sizes(s.tensors, gradients.size(), [&](std::size_t t) { return gradients[t].size(); },
                "write_gradients");
  for (std::size_t t = 0; t < s.tensors.size(); ++t) {
    // HDF5's write takes a non-const pointer but does not modify the buffer.
    transfer_slice(s.grads[t].get(), step, rank, s.tensors[t].numel(), s.tensors[t].shape,
                   const_cast<float*>(gradients[t].data()), true, s.file,
                   "/grads/" + s.tensors[t].name);
  }
}

void GradientTraceWriter::close() {
  const SilenceHdf5Errors silence;
  State& s = *state_;
  s.grads.clear();
  check(s.file_id.close(), s.file, "cannot finish writing the file");
}

}  // namespace lowcomm

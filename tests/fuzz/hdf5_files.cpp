// The HDF5 files lowcomm reads back, fuzzed through lowcomm's own checks rather than HDF5's
// parser (which is not ours to fix): the first input byte chooses a kind of file, lowcomm's own
// writer makes a valid one, and the rest of the input is a list of structural edits made through
// the HDF5 API before lowcomm's reader opens the result:
//
//   kind 0  checkpoint       read_checkpoint, the state restored into AdamW and Muon, a step each
//   kind 1  gradient trace   GradientTraceReader: every tensor's initial values, then the gradients
//                            of the first steps and ranks
//   kind 2  run log          read_run_config, RunLog::append (dropping rows from a chosen step),
//                            one row of every table, close
//
// An edit (one byte chooses it, the next bytes its object and arguments) removes an object,
// replaces a dataset by one of another type, rank, shape or storage, adds a dataset or a group,
// sets an attribute to a value of any type or removes one, overwrites a dataset's values, or
// resizes an extendible dataset. Edits HDF5 refuses are skipped. Each reader accepts the file or
// throws lowcomm::Error; its messages are not checked here (tests/log does that).
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/log/checkpoint_file.hpp"
#include "lowcomm/log/gradient_trace.hpp"
#include "lowcomm/log/run_log.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("lowcomm-fuzz-" + std::to_string(::getpid()) + "-" + name);
}

std::vector<char> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// --- The valid files each kind starts from, written once by lowcomm's writers. -----------------

// Two tensors as the optimizers below step them: a 2-D weight (Muon orthogonalises it) and a bias.
const std::vector<TensorInfo>& tensors() {
  static const std::vector<TensorInfo> all{{"w", {4, 3}}, {"b", {3}}};
  return all;
}

std::unique_ptr<Optimizer> make(const std::string& name) {
  static const ConfigSchema schema = [] {
    ConfigSchema s;
    add_optimizer_keys(s);
    return s;
  }();
  const Config config = Config::from_string("[optimizer]\nname = \"" + name + "\"\n", schema);
  return make_optimizer(config, OptimizerSetup{.execution = {}, .tensors = tensors()});
}

struct Weights {
  std::vector<float> w = std::vector<float>(12, 0.5f), b = std::vector<float>(3, -0.25f);
  std::array<std::span<float>, 2> spans() { return {std::span<float>(w), std::span<float>(b)}; }
};

void step(Optimizer& optimizer) {
  Weights params, grads;
  const auto p = params.spans();
  const std::array<std::span<const float>, 2> g{std::span<const float>(grads.w), std::span<const float>(grads.b)};
  optimizer.step(p, g, 0.01);
}

std::vector<char> valid_checkpoint() {
  StateDict state;
  for (const char* name : {"adamw", "muon"}) {
    const auto optimizer = make(name);
    step(*optimizer);
    optimizer->save_state(state, std::string(name) + "/");
  }
  state.put("strategy/step", std::int64_t{1});
  const fs::path path = scratch("checkpoint.h5");
  write_checkpoint(path, state);
  return file_bytes(path);
}

std::vector<char> valid_trace() {
  const fs::path path = scratch("trace.h5");
  Weights initial;
  const std::array<std::span<const float>, 2> values{std::span<const float>(initial.w),
                                                     std::span<const float>(initial.b)};
  GradientTraceWriter writer(path, 2, tensors(), values);
  for (int s = 0; s < 2; ++s) {
    const std::int64_t index = writer.add_step();
    for (int rank = 0; rank < 2; ++rank) writer.write_gradients(index, rank, values);
  }
  writer.close();
  return file_bytes(path);
}

RowValues zero_row(const RunLog& log, const TableSchema& table, std::int64_t step) {
  RowValues row = log.row(table.name);
  for (const Column& column : table.columns) {
    const bool is_step = column.name == "step";
    if (column.type == ColumnType::Int64) {
      const std::vector<std::int64_t> values(column.width, is_step ? step : 0);
      if (column.width == 1 && !column.two_dimensional) row.set(column.name, values[0]);
      else row.set(column.name, std::span<const std::int64_t>(values));
    } else {
      const std::vector<double> values(column.width, 0.0);
      if (column.width == 1 && !column.two_dimensional) row.set(column.name, values[0]);
      else row.set(column.name, std::span<const double>(values));
    }
  }
  return row;
}

const LogSchema& log_schema() {
  static const LogSchema schema = training_log_schema(2);
  return schema;
}

std::vector<char> valid_run_log() {
  const fs::path path = scratch("log.h5");
  RunMetadata metadata;
  metadata.config_text = "[strategy]\nname = \"data_parallel\"\n";
  metadata.world_size = 2;
  metadata.hosts = {"a", "b"};
  RunLog log = RunLog::create(path, log_schema(), metadata, {}, /*overwrite=*/true);
  for (std::int64_t s = 0; s < 3; ++s) {
    for (const TableSchema& table : log_schema().tables) log.write_row(zero_row(log, table, s));
  }
  log.close();
  return file_bytes(path);
}

// --- Edits through the HDF5 API. -----------------------------------------------------------------

struct Objects {
  std::vector<std::string> groups{"/"};
  std::vector<std::string> datasets;
};

herr_t collect(hid_t, const char* name, const H5O_info_t* info, void* data) {
  auto& objects = *static_cast<Objects*>(data);
  if (std::string_view(name) == ".") return 0;
  const std::string path = std::string("/") + name;
  if (info->type == H5O_TYPE_GROUP) objects.groups.push_back(path);
  if (info->type == H5O_TYPE_DATASET) objects.datasets.push_back(path);
  return 0;
}

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

// Names an edit may add: those the readers look for, and others.
constexpr std::array<const char*, 16> kNames{
    "floats", "integers", "params", "grads", "steps", "eval", "w", "b", "step", "tensors",
    "world_size", "format_version", "config", "0", "1", "x"};

hid_t take_type(FuzzInput& in) {
  static const std::array<hid_t, 7> types{H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, H5T_NATIVE_INT64, H5T_NATIVE_INT32,
                                          H5T_NATIVE_UINT8, H5T_NATIVE_INT8, H5T_NATIVE_UINT64};
  return types[in.take_index(types.size())];
}

// A value buffer for `count` elements of `type`, from the input's bytes (zeros once they run out).
std::vector<std::byte> take_values(FuzzInput& in, hid_t type, hsize_t count) {
  std::vector<std::byte> values(static_cast<std::size_t>(count) * H5Tget_size(type));
  const std::span<const std::byte> taken = in.take_bytes(std::min<std::size_t>(values.size(), 64));
  for (std::size_t i = 0; i < values.size() && !taken.empty(); ++i) values[i] = taken[i % taken.size()];
  return values;
}

void create_dataset(hid_t file, const std::string& path, FuzzInput& in) {
  const hid_t type = take_type(in);
  const std::uint8_t layout = in.take_byte();
  const int rank = layout % 4;  // 0: a scalar
  std::array<hsize_t, 3> dims{}, max_dims{}, chunk{};
  hsize_t count = 1;
  for (int d = 0; d < rank; ++d) {
    dims[d] = in.take_byte() % 6;
    max_dims[d] = (layout & 4) ? H5S_UNLIMITED : dims[d];
    chunk[d] = std::max<hsize_t>(dims[d], 1);
    count *= dims[d];
  }
  const hid_t space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims.data(), max_dims.data());
  const hid_t creation = H5Pcreate(H5P_DATASET_CREATE);
  if (rank > 0 && (layout & 12)) {  // chunked (extendible datasets must be), perhaps checksummed
    H5Pset_chunk(creation, rank, chunk.data());
    if (layout & 8) H5Pset_fletcher32(creation);
  }
  const hid_t set = H5Dcreate2(file, path.c_str(), type, space, H5P_DEFAULT, creation, H5P_DEFAULT);
  if (set >= 0) {
    const std::vector<std::byte> values = take_values(in, type, count);
    if (count > 0) H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Dclose(set);
  }
  H5Pclose(creation);
  H5Sclose(space);
}

void set_attribute(hid_t object, const std::string& name, FuzzInput& in) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  const std::uint8_t form = in.take_byte();
  if (form % 3 == 2) {  // a string, fixed-length or variable-length
    const std::span<const std::byte> bytes = in.take_bytes(form >> 3);
    const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    const hid_t type = H5Tcopy(H5T_C_S1);
    if (form & 4) H5Tset_size(type, H5T_VARIABLE);
    else H5Tset_size(type, std::max<std::size_t>(text.size(), 1));
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attribute = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attribute >= 0) {
      const char* pointer = text.c_str();
      std::string padded = text;
      padded.resize(std::max<std::size_t>(text.size(), 1));
      H5Awrite(attribute, type, (form & 4) ? static_cast<const void*>(&pointer) : padded.data());
      H5Aclose(attribute);
    }
    H5Sclose(space);
    H5Tclose(type);
    return;
  }
  const hid_t type = take_type(in);
  const hsize_t count = form % 3 == 0 ? 1 : 1 + (form >> 2) % 3;  // a scalar, or 1 to 3 values
  const hid_t space = form % 3 == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr);
  const hid_t attribute = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attribute >= 0) {
    const std::vector<std::byte> values = take_values(in, type, count);
    H5Awrite(attribute, type, values.data());
    H5Aclose(attribute);
  }
  H5Sclose(space);
}

void edit(hid_t file, FuzzInput& in) {
  Objects objects;
  H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, collect, &objects, H5O_INFO_BASIC);
  const std::uint8_t what = in.take_byte() % 8;
  const auto pick = [&](const std::vector<std::string>& among) { return among[in.take_index(among.size())]; };
  const std::string child = kNames[in.take_index(kNames.size())];
  switch (what) {
    case 0: {  // remove an object (a group with all it holds)
      std::vector<std::string> all(objects.groups.begin() + 1, objects.groups.end());
      all.insert(all.end(), objects.datasets.begin(), objects.datasets.end());
      if (!all.empty()) H5Ldelete(file, pick(all).c_str(), H5P_DEFAULT);
      break;
    }
    case 1:  // replace a dataset by another
      if (!objects.datasets.empty()) {
        const std::string path = pick(objects.datasets);
        H5Ldelete(file, path.c_str(), H5P_DEFAULT);
        create_dataset(file, path, in);
      }
      break;
    case 2: {  // add a dataset
      const std::string parent = pick(objects.groups);
      create_dataset(file, (parent == "/" ? "" : parent) + "/" + child, in);
      break;
    }
    case 3: {  // add a group
      const std::string parent = pick(objects.groups);
      const hid_t group = H5Gcreate2(file, ((parent == "/" ? "" : parent) + "/" + child).c_str(), H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT);
      if (group >= 0) H5Gclose(group);
      break;
    }
    case 4:    // set an attribute (of the readers' names, or an existing one's)
    case 5: {  // remove an attribute
      std::vector<std::string> all = objects.groups;
      all.insert(all.end(), objects.datasets.begin(), objects.datasets.end());
      const hid_t object = H5Oopen(file, pick(all).c_str(), H5P_DEFAULT);
      if (object < 0) break;
      std::vector<std::string> attributes;
      H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute, &attributes);
      if (what == 4) {
        set_attribute(object, attributes.empty() || in.take_byte() % 2 ? child : pick(attributes), in);
      } else if (!attributes.empty()) {
        H5Adelete(object, pick(attributes).c_str());
      }
      H5Oclose(object);
      break;
    }
    case 6:    // overwrite a dataset's values
    case 7: {  // resize an extendible dataset
      if (objects.datasets.empty()) break;
      const hid_t set = H5Dopen2(file, pick(objects.datasets).c_str(), H5P_DEFAULT);
      if (set < 0) break;
      const hid_t space = H5Dget_space(set);
      const int rank = H5Sget_simple_extent_ndims(space);
      if (what == 6) {
        const hid_t type = H5Dget_type(set);
        const hid_t native = H5Tget_native_type(type, H5T_DIR_DEFAULT);
        const hssize_t count = H5Sget_simple_extent_npoints(space);
        if (count > 0 && count < (1 << 16) && H5Tget_class(type) != H5T_STRING) {
          const std::vector<std::byte> values = take_values(in, native, static_cast<hsize_t>(count));
          H5Dwrite(set, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
        }
        H5Tclose(native);
        H5Tclose(type);
      } else if (rank > 0 && rank <= 4) {
        std::array<hsize_t, 4> dims{};
        H5Sget_simple_extent_dims(space, dims.data(), nullptr);
        dims[in.take_index(static_cast<std::size_t>(rank))] = in.take_byte() % 8;
        H5Dset_extent(set, dims.data());
      }
      H5Sclose(space);
      H5Dclose(set);
      break;
    }
  }
}

void write_edited(const fs::path& path, const std::vector<char>& valid, FuzzInput& in) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(valid.data(), static_cast<std::streamsize>(valid.size()));
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) std::abort();  // lowcomm's own valid file
  for (int edits = 0; edits < 12 && !in.empty(); ++edits) edit(file, in);
  H5Fclose(file);
}

// --- The readers. --------------------------------------------------------------------------------

void read_checkpoint_kind(const fs::path& path) {
  const StateDict state = read_checkpoint(path);
  for (const char* name : {"adamw", "muon"}) {
    const auto optimizer = make(name);
    only_lowcomm_errors([&] {
      optimizer->load_state(state, std::string(name) + "/");
      step(*optimizer);
    });
  }
}

void read_trace_kind(const fs::path& path) {
  const GradientTraceReader trace(path);
  std::vector<std::vector<float>> values;
  for (std::size_t t = 0; t < trace.tensors().size(); ++t) {
    values.emplace_back(static_cast<std::size_t>(trace.tensors()[t].numel()));
    trace.read_initial_values(t, values.back());
  }
  const std::vector<std::span<float>> out(values.begin(), values.end());
  for (std::int64_t s = 0; s < std::min<std::int64_t>(trace.steps(), 3); ++s) {
    for (int rank = 0; rank < std::min(trace.world_size(), 3); ++rank) trace.read_gradients(s, rank, out);
  }
}

void read_run_log_kind(const fs::path& path, std::int64_t drop_from) {
  (void)read_run_config(path);
  RunLog log = RunLog::append(path, log_schema(), {}, drop_from, "[strategy]\nname = \"demo\"\n");
  for (const TableSchema& table : log_schema().tables) log.write_row(zero_row(log, table, drop_from));
  log.close();
}

void run(FuzzInput& in) {
  static const bool quiet = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;  // the edits HDF5 refuses
  (void)quiet;
  static const std::array<std::vector<char>, 3> valid{valid_checkpoint(), valid_trace(), valid_run_log()};
  const std::uint8_t choice = in.take_byte();
  const int kind = choice % 3;
  const fs::path path = scratch("edited.h5");
  write_edited(path, valid[kind], in);
  if (kind == 0) read_checkpoint_kind(path);
  if (kind == 1) read_trace_kind(path);
  if (kind == 2) read_run_log_kind(path, (choice >> 2) % 4);
}

}  // namespace
}  // namespace lowcomm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lowcomm::fuzz::FuzzInput in(data, size);
  lowcomm::fuzz::only_lowcomm_errors([&] { lowcomm::fuzz::run(in); });
  return 0;
}

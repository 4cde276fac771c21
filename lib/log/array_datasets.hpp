#pragma once
// One fixed-shape array of the log on disk (ArraySchema): created with the file, since SWMR
// cannot add objects once writing has started, and written block by block.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "hdf5_handle.hpp"
#include "lowcomm/log/run_log.hpp"

namespace lowcomm::log_detail {

class ArrayDataset {
 public:
  static ArrayDataset create(hid_t file, const ArraySchema& schema, const std::filesystem::path& path);

  const ArraySchema& schema() const { return schema_; }

  // Writes the block at `leading` (one index per leading dimension, each inside its extent),
  // spanning the remaining dimensions; `elements` must be their product and `type` the array's.
  // LogError names the array otherwise.
  void write(std::span<const std::uint64_t> leading, ArrayType type, const void* data, std::size_t elements);

 private:
  ArrayDataset(ArraySchema schema, std::filesystem::path path) : schema_(std::move(schema)), path_(std::move(path)) {}

  ArraySchema schema_;
  std::filesystem::path path_;
  Hdf5Id dataset_;
};

}  // namespace lowcomm::log_detail

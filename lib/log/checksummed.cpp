#include "checksummed.hpp"

namespace lowcomm::log_detail {

hid_t checksummed_creation(std::span<const hsize_t> chunk) {
  const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
  if (properties < 0) return properties;
  if (H5Pset_chunk(properties, static_cast<int>(chunk.size()), chunk.data()) < 0 ||
      H5Pset_fletcher32(properties) < 0) {
    H5Pclose(properties);
    return -1;
  }
  return properties;
}

}  // namespace lowcomm::log_detail

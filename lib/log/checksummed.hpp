#pragma once
// Checkpoints and gradient traces carry HDF5's Fletcher32 checksum on every dataset lowcomm
// writes: HDF5 verifies it on every read (h5py's reads too), so a flipped byte fails the read,
// naming the file and the dataset, instead of returning different numbers. Files written by other
// tools without checksums read as before.
#include <hdf5.h>

#include <span>
#include <string_view>

namespace lowcomm::log_detail {

// Dataset creation properties, chunked with `chunk` (every extent > 0) and checksummed; a
// negative id when HDF5 refuses them (the caller's check reports it, as its file's error).
hid_t checksummed_creation(std::span<const hsize_t> chunk);

// The advice for a failed read of a checksummed file.
inline constexpr std::string_view kChecksumAdvice =
    "a checksum error means the file was damaged after it was written: restore it from a copy";

}  // namespace lowcomm::log_detail

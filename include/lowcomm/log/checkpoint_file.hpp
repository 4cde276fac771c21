#pragma once
// A StateDict on disk: one HDF5 file per rank and checkpoint. Each float entry is a 1-D float32
// dataset and each integer a scalar int64 dataset, at the entry's key used as an HDF5 path
// ("strategy/optimizer/m/3" → groups strategy/optimizer/m, dataset 3), under the root groups
// /floats and /integers. h5py reads it without lowcomm.
//
// write_checkpoint writes FILE.partial and renames it to FILE only once complete and closed, so a
// file under its final name is always a whole checkpoint, even after a kill mid-write.
#include <filesystem>

#include "lowcomm/core/state_dict.hpp"

namespace lowcomm {

// Throws LogError naming the file and what failed (a missing folder, a full disk, ...).
void write_checkpoint(const std::filesystem::path& file, const StateDict& state);

// Throws LogError naming the file for a missing, unreadable or malformed file (an entry of
// another type or rank, a missing root group).
StateDict read_checkpoint(const std::filesystem::path& file);

}  // namespace lowcomm

#pragma once
// A file of per-pair links (`network.links = "links.csv"`, docs/network-model.md): one line per
// ordered pair of ranks, the path from `source` to `destination`,
//
//     source,destination,latency_ms,bandwidth_mbps
//     0,1,35,200
//     1,0,35,200
//
// after that header line. Blank lines and lines starting with '#' are skipped; spaces around a
// field are ignored. A pair not listed keeps the ranks' own links.
#include <filesystem>
#include <vector>

#include "lowcomm/comm/network_model.hpp"

namespace lowcomm {

struct PairLinkEntry {
  int source;
  int destination;
  PairLink link;
};

// Throws ConfigError naming the file, the line and the field for a missing file, a missing or
// wrong header, a line with another number of fields, a value that is not a number or out of
// range, a rank the job does not have, a pair of one rank, and a pair listed twice.
std::vector<PairLinkEntry> read_link_file(const std::filesystem::path& file, int world_size);

}  // namespace lowcomm

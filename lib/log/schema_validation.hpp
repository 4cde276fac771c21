#pragma once
// A LogSchema is data a caller assembles; this rejects one that cannot become a valid file
// layout before anything is written.
#include "lowcomm/log/run_log.hpp"

namespace lowcomm::log_detail {

// Throws LogError naming the table or column at fault: names must be non-empty, unique within
// their scope and usable as HDF5 link names; every table has a column; every width is >= 1;
// a column named "step" is Int64 of width 1.
void validate_schema(const LogSchema& schema);

}  // namespace lowcomm::log_detail

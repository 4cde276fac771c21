#pragma once
#include <string>
#include <vector>

#include "lowcomm/comm/control_channel.hpp"

namespace lowcomm {

// Every rank's processor name, in rank order, on every rank (for run logs: which node ran what).
std::vector<std::string> gather_host_names(const ControlChannel& control);

}  // namespace lowcomm

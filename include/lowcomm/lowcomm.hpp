#pragma once
// The umbrella header: everything a program using lowcomm needs.
#include "lowcomm/build_info.hpp"
#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/collective_schedule.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/host_names.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/network_model.hpp"
#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/run_log.hpp"
#include "lowcomm/log/run_metadata.hpp"

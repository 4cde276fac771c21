#pragma once
// What `lowcomm plan` writes: the Markdown table on stdout, and the same numbers in bytes and
// seconds as a PlanTable for CSV and HDF5 (log/plan_file.hpp).
#include <string>
#include <vector>

#include "lowcomm/log/plan_file.hpp"
#include "plan/method_plan.hpp"

namespace lowcomm::cli {

// Ratios divide `baseline`'s bytes by each method's; the network goes in the heading when every
// method has the same one, in a column otherwise.
void write_markdown(const std::vector<MethodPlan>& plans, const MethodPlan& baseline, const std::string& model,
                    std::size_t tensors);

// One entry per method; plans must not be empty.
PlanTable plan_table(const std::vector<MethodPlan>& plans, const std::string& model);

// Written to FILE.partial, renamed to FILE once complete; throws lowcomm::Error otherwise.
void write_csv(const PlanTable& table, const std::string& path);

}  // namespace lowcomm::cli

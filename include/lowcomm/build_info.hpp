#pragma once
// What this copy of lowcomm was built from and with; reported by `lowcomm info` and written
// into every run log so a result can be traced back to its code.
#include <string_view>

namespace lowcomm {

struct BuildInfo {
  std::string_view version;
  std::string_view git_revision;  // "<sha>[-dirty]", or "unknown" when built outside git
  std::string_view build_type;
  std::string_view compiler;
  std::string_view options;  // library kind, accelerator switches, extra compiler flags
  bool cuda_enabled;
  std::string_view cuda_version;
  bool kokkos_enabled;
  std::string_view kokkos_version;
};

const BuildInfo& build_info();

}  // namespace lowcomm

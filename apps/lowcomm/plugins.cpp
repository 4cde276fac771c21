#include "plugins.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "lowcomm/error.hpp"

namespace lowcomm::cli {

void load_plugin(const std::string& path) {
  // RTLD_GLOBAL: a plug-in may depend on another one loaded before it.
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    throw Error(fmt::format("cannot load plug-in '{}': {} (give a path to a shared library built "
                            "against this lowcomm, see docs/plugins.md)", path, dlerror()));
  }
}

void load_plugins_from_environment() {
  const char* list = std::getenv("LOWCOMM_PLUGINS");
  if (list == nullptr) return;
  std::istringstream paths(list);
  for (std::string path; std::getline(paths, path, ':');) {
    if (!path.empty()) load_plugin(path);
  }
}

}  // namespace lowcomm::cli

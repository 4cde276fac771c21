#include "plugins.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "lowcomm/core/registry.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::cli {

void load_plugin(const std::string& path) {
  // Loading a library twice runs its registrations once: say so instead of "registered nothing".
  if (void* loaded = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(loaded);
    std::fprintf(stderr, "lowcomm: note: plug-in '%s' is loaded already (--plugin and LOWCOMM_PLUGINS "
                         "both name it?); loaded once\n", path.c_str());
    return;
  }
  const std::size_t before = registrations_made();
  {
    const RegistrationSource source(path);
    // RTLD_GLOBAL: a plug-in may depend on another one loaded before it.
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      throw Error(fmt::format("cannot load plug-in '{}': {} (give a path to a shared library built "
                              "against this lowcomm, see docs/plugins.md)", path, dlerror()));
    }
  }
  const std::vector<std::string> errors = take_registration_errors();
  if (!errors.empty()) {
    throw Error(fmt::format("plug-in '{}' could not register: {}", path, fmt::join(errors, "; ")));
  }
  if (registrations_made() == before) {
    std::fprintf(stderr, "lowcomm: warning: plug-in '%s' registered nothing: it needs a static "
                         "RegisterCompressor, RegisterStrategy or RegisterOptimizer object (docs/plugins.md)\n",
                 path.c_str());
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

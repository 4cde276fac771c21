#pragma once
// Plug-ins: shared libraries that register compressors, strategies or optimizers when loaded.
// `lowcomm --plugin libmine.so ...` or LOWCOMM_PLUGINS=a.so:b.so loads them before the command
// runs, so their names work everywhere a built-in's does (docs/plugins.md).
#include <string>

namespace lowcomm::cli {

// dlopen()s the library; its static registration objects run. Throws lowcomm::Error with the
// loader's message when it cannot be loaded.
void load_plugin(const std::string& path);

// Every library listed in LOWCOMM_PLUGINS (':'-separated), if set.
void load_plugins_from_environment();

}  // namespace lowcomm::cli

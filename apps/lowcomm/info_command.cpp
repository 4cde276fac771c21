// `lowcomm info`: what this build is and can do, without starting MPI.
#include <fmt/format.h>
#include <hdf5.h>
#include <mpi.h>

#include <iostream>

#include "commands.hpp"
#include "lowcomm/build_info.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/config/config.hpp"

#ifdef LOWCOMM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace lowcomm::cli {

namespace {

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);  // allowed before MPI_Init
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of("\n,"));
}

std::string hdf5_library() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

std::string cuda_status() {
  const BuildInfo& build = build_info();
  if (!build.cuda_enabled) return "not built (no nvcc found at configure time)";
  std::string text = fmt::format("built with nvcc {}", build.cuda_version);
#ifdef LOWCOMM_HAVE_CUDA
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  text += status == cudaSuccess ? fmt::format(", {} device(s) visible", devices)
                                : fmt::format(", no usable device ({})", cudaGetErrorString(status));
#endif
  return text;
}

std::string format_default(const ConfigKey& key) {
  if (!key.default_value) return "(unset)";
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) return fmt::format("\"{}\"", v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else return fmt::format("{}", v);
      },
      *key.default_value);
}

void print_info() {
  const BuildInfo& build = build_info();
  std::cout << fmt::format("lowcomm {} (git {})\n", build.version, build.git_revision)
            << fmt::format("  build:     {}, {}\n", build.build_type, build.compiler)
            << fmt::format("  MPI:       {}\n", mpi_library())
            << fmt::format("  HDF5:      {}\n", hdf5_library())
            << fmt::format("  CUDA:      {}\n", cuda_status())
            << fmt::format("  Kokkos:    {}\n", build.kokkos_enabled
                                                   ? fmt::format("built with Kokkos {}", build.kokkos_version)
                                                   : std::string("not built (-DLOWCOMM_ENABLE_KOKKOS=ON)"));
  std::cout << "\nNetwork scenarios (network.scenario):\n";
  for (const NetworkScenario& s : network_scenarios()) {
    std::cout << fmt::format("  {:<10} {}\n", s.name, s.description);
  }
  ConfigSchema schema;
  add_network_keys(schema);
  std::cout << "\nNetwork configuration keys:\n";
  for (const ConfigKey* key : schema.keys()) {
    std::cout << fmt::format("  {:<34} default {:<12} {}\n", key->path, format_default(*key), key->description);
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  CLI::App* info = app.add_subcommand("info", "Show version, build options, libraries, scenarios and keys");
  info->callback(print_info);
}

}  // namespace lowcomm::cli

// This process's device and stream, chosen on the first Backend::Cuda call rather than when the
// library loads, so a run on the Cpu backend never touches the CUDA runtime (and runs where no
// driver is installed).
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cuda_runtime.hpp"
#include "lowcomm/core/local_rank.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

struct Device {
  int index = -1;         // among the visible devices
  int visible = 0;
  std::string unusable;   // why there is no device, "" when there is one
  std::optional<LocalRank> local_rank;
};

const Device& device() {
  static const Device chosen = [] {
    Device d;
    const cudaError_t status = cudaGetDeviceCount(&d.visible);
    if (status != cudaSuccess || d.visible < 1) {
      const std::string cause = status != cudaSuccess
                                    ? fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(status))
                                    : std::string("cudaGetDeviceCount found none");
      (void)cudaGetLastError();  // clear the sticky error a missing driver leaves
      d.unusable = fmt::format("no CUDA device is visible to this process ({}); run on a GPU node (Slurm: "
                               "--gpus-per-task=1), or choose compute.backend=cpu", cause);
      return d;
    }
    try {
      d.local_rank = local_rank_from_environment();
    } catch (const Error& e) {
      d.unusable = e.what();
      return d;
    }
    d.index = device_for_local_rank(d.local_rank, d.visible);
    return d;
  }();
  return chosen;
}

// Made on the device once; a blocking stream, so it also orders after work a caller queued on
// the legacy default stream.
cudaStream_t the_stream() {
  static const cudaStream_t made = [] {
    cudaStream_t s = nullptr;
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    return s;
  }();
  return made;
}

}  // namespace

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(fmt::format("CUDA: {} failed: {}: {}", what, cudaGetErrorName(status), cudaGetErrorString(status)));
  }
}

std::string unavailable_reason() { return device().unusable; }

cudaStream_t stream() {
  const Device& d = device();
  if (!d.unusable.empty()) throw Error(fmt::format("compute.backend=cuda: {}", d.unusable));
  // The current device is per host thread: set it on each thread's first call.
  thread_local bool selected = false;
  if (!selected) {
    check(cudaSetDevice(d.index), "cudaSetDevice");
    selected = true;
  }
  return the_stream();
}

void synchronize(const char* what) {
  const cudaError_t status = cudaStreamSynchronize(stream());
  if (status != cudaSuccess) check(status, fmt::format("waiting for {}", what).c_str());
}

bool device_accessible(const void* pointer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

FirstPosition::FirstPosition(std::int64_t none) : value_(1) {
  const auto initial = static_cast<unsigned long long>(none);
  check(cudaMemcpyAsync(value_.data(), &initial, sizeof initial, cudaMemcpyHostToDevice, stream()),
        "cudaMemcpyAsync (first position)");
  // The copy reads `initial` when it runs: wait before the stack slot goes.
  synchronize("the first position's initial value");
}

std::int64_t FirstPosition::get() {
  unsigned long long result = 0;
  check(cudaMemcpyAsync(&result, value_.data(), sizeof result, cudaMemcpyDeviceToHost, stream()),
        "cudaMemcpyAsync (first position)");
  synchronize("a check on the device");
  return static_cast<std::int64_t>(result);
}

std::string description() {
  const Device& d = device();
  if (!d.unusable.empty()) return d.unusable;
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, d.index), "cudaGetDeviceProperties");
  const std::string chosen_by = d.local_rank ? fmt::format("local rank {} from {}", d.local_rank->rank, d.local_rank->source)
                                             : std::string("no local rank set");
  return fmt::format("CUDA runtime {}.{}, driver {}.{}, device {} of {} ({}): {} (sm_{}{}, {:.1f} GiB), matrix products {}",
                     runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10, d.index, d.visible,
                     chosen_by, properties.name, properties.major, properties.minor,
                     static_cast<double>(properties.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0), gemm_provider());
}

}  // namespace lowcomm::kernels::cuda_backend

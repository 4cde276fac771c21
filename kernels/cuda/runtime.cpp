// This process's device and stream, chosen when the CUDA backend is first asked for (chosen in a
// configuration, or called) rather than when the library loads, so a run on the Cpu backend never
// touches the CUDA runtime (and runs where no driver is installed).
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "../cuda_device.hpp"
#include "cuda_runtime.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

struct Device {
  int index = -1;         // among the visible devices
  int visible = 0;
  std::string unusable;   // why there is no device, "" when there is one
  std::optional<LocalRank> local_rank;
};

// What place_on_node said, until the device is chosen at the backend's first use.
struct Placement {
  std::mutex mutex;
  std::optional<LocalRank> local_rank;
  bool chosen = false;  // the device below exists: a different local rank comes too late
};

Placement& placement() {
  static Placement p;
  return p;
}

const Device& device() {
  static const Device chosen = [] {
    Device d;
    {
      Placement& p = placement();
      const std::scoped_lock lock(p.mutex);
      d.local_rank = p.local_rank;
      p.chosen = true;
    }
    const cudaError_t status = cudaGetDeviceCount(&d.visible);
    if (status != cudaSuccess || d.visible < 1) {
      const std::string cause = status != cudaSuccess
                                    ? fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(status))
                                    : std::string("cudaGetDeviceCount found none");
      (void)cudaGetLastError();  // clear the sticky error a missing driver leaves
      d.unusable = fmt::format("no usable CUDA device for this process ({}); run on a GPU node (Slurm: "
                               "--gpus-per-task=1) with a driver for CUDA {}, or choose compute.backend=cpu",
                               cause, CUDART_VERSION / 1000);
      return d;
    }
    d.index = device_for_local_rank(d.local_rank, d.visible);
    // Make the context now, so that a device that cannot take this process (one in exclusive mode
    // already held, a broken MIG setup) is refused when the backend is chosen, not at the first
    // kernel.
    const cudaError_t context = cudaSetDevice(d.index) == cudaSuccess ? cudaFree(nullptr) : cudaGetLastError();
    if (context != cudaSuccess) {
      (void)cudaGetLastError();
      d.unusable = fmt::format("CUDA device {} of {} cannot be used by this process: {}; check nvidia-smi for its "
                               "compute mode and other processes, or choose compute.backend=cpu",
                               d.index, d.visible, cudaGetErrorString(context));
      d.index = -1;
    }
    return d;
  }();
  return chosen;
}

// Made on the device once; a blocking stream, so it also orders after work a caller queued on
// the legacy default stream. The device's memory pool keeps what is freed (release threshold: no
// limit) instead of returning it to the driver at every synchronisation, since every call
// allocates its scratch and staging buffers from it.
cudaStream_t the_stream(int device) {
  static const cudaStream_t made = [device] {
    cudaStream_t s = nullptr;
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    cudaMemPool_t pool = nullptr;
    check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    std::uint64_t keep_all = UINT64_MAX;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all), "cudaMemPoolSetAttribute");
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

void place_on_node(const std::optional<LocalRank>& local_rank) {
  Placement& p = placement();
  const std::scoped_lock lock(p.mutex);
  const auto rank_of = [](const std::optional<LocalRank>& r) { return r ? r->rank : 0; };
  if (p.chosen && rank_of(p.local_rank) != rank_of(local_rank)) {
    throw Error(fmt::format("the CUDA backend computes on the device of local rank {} already; place this process "
                            "(kernels::place_on_node) before its first CUDA kernel",
                            rank_of(p.local_rank)));
  }
  if (!p.chosen) p.local_rank = local_rank;
}

cudaStream_t stream() {
  const Device& d = device();
  if (!d.unusable.empty()) throw Error(fmt::format("compute.backend=cuda: {}", d.unusable));
  // The current device is per host thread, and other code (a user's, NCCL) may change it: check
  // it on every call (cudaGetDevice is cheap).
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != d.index) check(cudaSetDevice(d.index), "cudaSetDevice");
  return the_stream(d.index);
}

void synchronize(const char* what) {
  const cudaError_t status = cudaStreamSynchronize(stream());
  if (status != cudaSuccess) check(status, fmt::format("waiting for {}", what).c_str());
}

bool device_accessible(const void* pointer) {
  (void)stream();
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

void* allocate(std::size_t bytes) {
  const cudaStream_t on = stream();  // on this process's device
  void* memory = nullptr;
  if (const cudaError_t status = cudaMallocManaged(&memory, bytes); status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(fmt::format("CUDA: cannot allocate {:.2f} GiB of managed memory: {}; use a smaller model or batch",
                            static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), cudaGetErrorString(status)));
  }
  // Zeroed by the device, so its pages start there.
  const cudaError_t zeroed = cudaMemsetAsync(memory, 0, bytes, on);
  const cudaError_t waited = zeroed == cudaSuccess ? cudaStreamSynchronize(on) : zeroed;
  if (waited != cudaSuccess) {
    cudaFree(memory);
    check(waited, "zeroing managed memory");
  }
  return memory;
}

void release(void* memory) noexcept {
  // On this process's device, so that a thread that never computed makes no context on device 0.
  if (const Device& d = device(); d.unusable.empty()) cudaSetDevice(d.index);
  cudaFree(memory);  // waits for the device first: no kernel still using it is cut short
}

double copy_bandwidth(std::size_t bytes) {
  DeviceBuffer<char> from(bytes), to(bytes);
  check(cudaMemsetAsync(from.data(), 1, bytes, stream()), "cudaMemsetAsync (copy bandwidth)");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  float best_ms = 0.0f;
  for (int i = 0; i < 6; ++i) {  // the first warms up; the best of the other five
    check(cudaEventRecord(start, stream()), "cudaEventRecord");
    check(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, stream()),
          "cudaMemcpyAsync (copy bandwidth)");
    check(cudaEventRecord(stop, stream()), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (i > 0 && (best_ms == 0.0f || ms < best_ms)) best_ms = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return 2.0 * static_cast<double>(bytes) / (static_cast<double>(best_ms) * 1e-3) / 1e9;
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
                                             : std::string("no local rank given to place_on_node");
  return fmt::format("CUDA runtime {}.{}, driver {}.{}, device {} of {} ({}): {} (sm_{}{}, {:.1f} GiB), matrix products {}",
                     runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10, d.index, d.visible,
                     chosen_by, properties.name, properties.major, properties.minor,
                     static_cast<double>(properties.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0), gemm_provider());
}

}  // namespace lowcomm::kernels::cuda_backend

namespace lowcomm::kernels::cuda_device {

std::string unavailable_reason() { return cuda_backend::unavailable_reason(); }
void* stream() { return cuda_backend::stream(); }
bool device_accessible(const void* pointer) { return cuda_backend::device_accessible(pointer); }
void check(int status, const char* what) { cuda_backend::check(static_cast<cudaError_t>(status), what); }

}  // namespace lowcomm::kernels::cuda_device

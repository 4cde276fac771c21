// Index packing (include/lowcomm/kernels/pack.hpp): Reference writes one byte at a time for any
// width; Cpu is specialised per width (the compiler merges the byte shifts into single loads and
// stores) and splits large arrays over OpenMP threads.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif
#include "lowcomm/kernels/pack.hpp"

namespace lowcomm::kernels {
namespace {

// Below this many indices starting threads costs more than the copy saves.
constexpr std::size_t kParallelMin = std::size_t{1} << 16;

// The width's byte count, after checking that the enum holds one of its four values (a width
// may come from a message header cast to IndexWidth).
std::size_t width_bytes(std::string_view kernel, IndexWidth width) {
  switch (width) {
    case IndexWidth::U8:
    case IndexWidth::U16:
    case IndexWidth::U32:
    case IndexWidth::I64: return static_cast<std::size_t>(width);
  }
  throw Error(fmt::format("{}: invalid index width {} (must be 1, 2, 4 or 8 bytes)", kernel,
                          static_cast<int>(width)));
}

// The largest index a width holds; I64 keeps the sign bit clear so indices stay int64.
std::uint64_t max_index(std::size_t bytes) {
  return bytes == 8 ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    : (std::uint64_t{1} << (8 * bytes)) - 1;
}

bool fits(std::int64_t index, std::uint64_t max) {
  return index >= 0 && static_cast<std::uint64_t>(index) <= max;
}

bool valid(std::uint64_t index, std::uint64_t limit, std::uint64_t max) {
  return index < limit && index <= max;
}

[[noreturn]] void throw_unfit(std::size_t position, std::int64_t index, std::size_t bytes) {
  throw Error(fmt::format("pack_indices: index {} at position {} does not fit in {} bytes "
                          "(must be in [0, {}])", index, position, bytes, max_index(bytes)));
}

[[noreturn]] void throw_out_of_range(std::size_t position, std::uint64_t index,
                                     std::uint64_t limit) {
  throw Error(fmt::format("unpack_indices: malformed payload: index {} at position {} is not "
                          "below the limit {}", index, position, limit));
}

std::uint64_t load_reference(const std::byte* in, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t b = 0; b < bytes; ++b) {
    value |= static_cast<std::uint64_t>(in[b]) << (8 * b);
  }
  return value;
}

void pack_reference(std::span<const std::int64_t> indices, std::size_t bytes,
                    std::span<std::byte> out) {
  const std::uint64_t max = max_index(bytes);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (!fits(indices[i], max)) throw_unfit(i, indices[i], bytes);
    const auto value = static_cast<std::uint64_t>(indices[i]);
    for (std::size_t b = 0; b < bytes; ++b) {
      out[i * bytes + b] = static_cast<std::byte>((value >> (8 * b)) & 0xFF);
    }
  }
}

void unpack_reference(std::span<const std::byte> in, std::size_t bytes, std::uint64_t limit,
                      std::span<std::int64_t> out) {
  const std::uint64_t max = max_index(bytes);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint64_t value = load_reference(&in[i * bytes], bytes);
    if (!valid(value, limit, max)) throw_out_of_range(i, value, limit);
    out[i] = static_cast<std::int64_t>(value);
  }
}

template <std::size_t Bytes>
void store_le(std::byte* out, std::uint64_t value) {
  for (std::size_t b = 0; b < Bytes; ++b) out[b] = static_cast<std::byte>(value >> (8 * b));
}

template <std::size_t Bytes>
std::uint64_t load_le(const std::byte* in) {
  std::uint64_t value = 0;
  for (std::size_t b = 0; b < Bytes; ++b) value |= static_cast<std::uint64_t>(in[b]) << (8 * b);
  return value;
}

// Writes every index (a bad one truncated) and reports the first bad position afterwards, so the
// loop has no early exit and no exception crosses the OpenMP region.
template <std::size_t Bytes>
void pack_cpu(std::span<const std::int64_t> indices, std::span<std::byte> out) {
  const std::uint64_t max = max_index(Bytes);
  const std::int64_t* in = indices.data();
  std::byte* dst = out.data();
  const std::size_t n = indices.size();
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (n >= kParallelMin)
  for (std::size_t i = 0; i < n; ++i) {
    if (!fits(in[i], max)) first_bad = std::min(first_bad, i);
    store_le<Bytes>(dst + i * Bytes, static_cast<std::uint64_t>(in[i]));
  }
  if (first_bad < n) throw_unfit(first_bad, indices[first_bad], Bytes);
}

template <std::size_t Bytes>
void unpack_cpu(std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out) {
  const std::uint64_t max = max_index(Bytes);
  const std::byte* src = in.data();
  std::int64_t* dst = out.data();
  const std::size_t n = out.size();
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (n >= kParallelMin)
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t value = load_le<Bytes>(src + i * Bytes);
    if (!valid(value, limit, max)) first_bad = std::min(first_bad, i);
    dst[i] = static_cast<std::int64_t>(value);
  }
  if (first_bad < n) throw_out_of_range(first_bad, load_le<Bytes>(src + first_bad * Bytes), limit);
}

}  // namespace

IndexWidth smallest_index_width(std::uint64_t limit) {
  if (limit <= (std::uint64_t{1} << 8)) return IndexWidth::U8;
  if (limit <= (std::uint64_t{1} << 16)) return IndexWidth::U16;
  if (limit <= (std::uint64_t{1} << 32)) return IndexWidth::U32;
  return IndexWidth::I64;
}

std::size_t packed_index_bytes(std::size_t count, IndexWidth width) {
  const std::size_t bytes = width_bytes("packed_index_bytes", width);
  if (count > std::numeric_limits<std::size_t>::max() / bytes) {
    throw Error(fmt::format("packed_index_bytes: {} indices of {} bytes overflow size_t", count,
                            bytes));
  }
  return count * bytes;
}

void pack_indices(Backend backend, std::span<const std::int64_t> indices, IndexWidth width,
                  std::span<std::byte> out) {
  const std::size_t bytes = width_bytes("pack_indices", width);
  if (out.size() != packed_index_bytes(indices.size(), width)) {
    throw Error(fmt::format("pack_indices: output holds {} bytes, {} indices of {} bytes need {}",
                            out.size(), indices.size(), bytes, indices.size() * bytes));
  }
  switch (backend) {
    case Backend::Reference: return pack_reference(indices, bytes, out);
    case Backend::Cpu:
      switch (width) {
        case IndexWidth::U8: return pack_cpu<1>(indices, out);
        case IndexWidth::U16: return pack_cpu<2>(indices, out);
        case IndexWidth::U32: return pack_cpu<4>(indices, out);
        case IndexWidth::I64: return pack_cpu<8>(indices, out);
      }
      break;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (const std::size_t bad = kokkos_backend::pack_indices(indices, bytes, out); bad < indices.size()) {
        throw_unfit(bad, indices[bad], bytes);
      }
      return;
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if (const std::size_t bad = cuda_backend::pack_indices(indices, bytes, out); bad < indices.size()) {
        throw_unfit(bad, indices[bad], bytes);
      }
      return;
#endif
      break;
  }
  unsupported("pack_indices", backend);
}

void unpack_indices(Backend backend, std::span<const std::byte> in, IndexWidth width,
                    std::uint64_t limit, std::span<std::int64_t> out) {
  const std::size_t bytes = width_bytes("unpack_indices", width);
  if (in.size() != packed_index_bytes(out.size(), width)) {
    throw Error(fmt::format("unpack_indices: malformed payload: {} bytes, {} indices of {} bytes "
                            "need exactly {}", in.size(), out.size(), bytes, out.size() * bytes));
  }
  switch (backend) {
    case Backend::Reference: return unpack_reference(in, bytes, limit, out);
    case Backend::Cpu:
      switch (width) {
        case IndexWidth::U8: return unpack_cpu<1>(in, limit, out);
        case IndexWidth::U16: return unpack_cpu<2>(in, limit, out);
        case IndexWidth::U32: return unpack_cpu<4>(in, limit, out);
        case IndexWidth::I64: return unpack_cpu<8>(in, limit, out);
      }
      break;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (const std::size_t bad = kokkos_backend::unpack_indices(in, bytes, limit, out); bad < out.size()) {
        throw_out_of_range(bad, load_reference(&in[bad * bytes], bytes), limit);
      }
      return;
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if (const std::size_t bad = cuda_backend::unpack_indices(in, bytes, limit, out); bad < out.size()) {
        throw_out_of_range(bad, load_reference(&in[bad * bytes], bytes), limit);
      }
      return;
#endif
      break;
  }
  unsupported("unpack_indices", backend);
}

}  // namespace lowcomm::kernels

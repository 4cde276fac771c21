#include "gathered_frames.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "lowcomm/error.hpp"

namespace lowcomm::compress_detail {

namespace {
constexpr std::size_t kSizeBytes = sizeof(std::uint32_t);
}  // namespace

std::size_t frame_bytes(std::span<const std::size_t> payload_sizes, bool with_sizes) {
  std::size_t bytes = with_sizes ? payload_sizes.size() * kSizeBytes : 0;
  for (const std::size_t size : payload_sizes) bytes += size;
  return bytes;
}

std::vector<std::byte> frame_payloads(std::span<const std::span<const std::byte>> payloads, bool with_sizes) {
  std::vector<std::size_t> sizes;
  for (const auto payload : payloads) sizes.push_back(payload.size());
  std::vector<std::byte> frame;
  frame.reserve(frame_bytes(sizes, with_sizes));
  if (with_sizes) {
    for (const auto payload : payloads) {
      if (payload.size() > UINT32_MAX) {
        throw Error(fmt::format("a compressed payload of {} bytes exceeds 4 GiB", payload.size()));
      }
      const auto size = static_cast<std::uint32_t>(payload.size());
      const auto* bytes = reinterpret_cast<const std::byte*>(&size);
      frame.insert(frame.end(), bytes, bytes + kSizeBytes);
    }
  }
  for (const auto payload : payloads) frame.insert(frame.end(), payload.begin(), payload.end());
  return frame;
}

std::vector<std::vector<std::span<const std::byte>>> split_frames(
    std::span<const std::byte> everything, std::span<const std::size_t> counts, std::size_t payloads_per_rank,
    std::optional<std::span<const std::size_t>> fixed_sizes, std::span<const int> senders) {
  if (fixed_sizes && fixed_sizes->size() != payloads_per_rank) {
    throw Error("split_frames: one fixed size per payload is needed");
  }
  std::vector<std::vector<std::span<const std::byte>>> payloads(
      payloads_per_rank, std::vector<std::span<const std::byte>>(counts.size()));
  std::size_t rank_offset = 0;
  for (std::size_t w = 0; w < counts.size(); ++w) {
    if (counts[w] > everything.size() - rank_offset) {
      throw Error(fmt::format("the all-gather returned {} bytes, fewer than the ranks' counts add up to",
                              everything.size()));
    }
    const std::span<const std::byte> frame = everything.subspan(rank_offset, counts[w]);
    const std::size_t rank = senders.empty() ? w : static_cast<std::size_t>(senders[w]);
    rank_offset += counts[w];
    std::size_t at = fixed_sizes ? 0 : payloads_per_rank * kSizeBytes;
    if (at > frame.size()) {
      throw Error(fmt::format("rank {} sent a truncated payload ({} bytes, its size table alone needs {})", rank,
                              frame.size(), at));
    }
    for (std::size_t p = 0; p < payloads_per_rank; ++p) {
      std::size_t size = 0;
      if (fixed_sizes) {
        size = (*fixed_sizes)[p];
      } else {
        std::uint32_t value = 0;
        std::memcpy(&value, frame.data() + p * kSizeBytes, kSizeBytes);
        size = value;
      }
      if (size > frame.size() - at) {
        throw Error(fmt::format("rank {} sent a truncated payload: payload {} announces {} bytes, {} are left", rank, p,
                                size, frame.size() - at));
      }
      payloads[p][w] = frame.subspan(at, size);
      at += size;
    }
    if (at != frame.size()) {
      throw Error(fmt::format("rank {} sent {} bytes more than its payloads' sizes account for", rank, frame.size() - at));
    }
  }
  return payloads;
}

}  // namespace lowcomm::compress_detail

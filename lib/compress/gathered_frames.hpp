#pragma once
// How the payloads of one all-gather round travel: each rank concatenates its units' payloads,
// behind a table of their sizes (one little-endian uint32 each) when the sizes vary; receivers
// cut every rank's frame back into payloads. The frames come from other ranks, so cutting them
// checks every size against what arrived.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace lowcomm::compress_detail {

// The size of a frame of payloads of these sizes (what frame_payloads returns).
std::size_t frame_bytes(std::span<const std::size_t> payload_sizes, bool with_sizes);

// This rank's frame: the size table (when with_sizes), then the payloads.
std::vector<std::byte> frame_payloads(std::span<const std::span<const std::byte>> payloads, bool with_sizes);

// Cuts `everything` (counts[w] bytes from frame w, in order) into payloads_per_rank payloads per
// frame: result[p][w] is payload p of frame w. With `fixed_sizes` (one size per payload, the same
// on every rank) the frames carry no size table. Throws lowcomm::Error naming the sending rank
// (senders[w]; frame w is rank w's when senders is empty) when a frame is shorter or longer than
// its sizes say.
std::vector<std::vector<std::span<const std::byte>>> split_frames(
    std::span<const std::byte> everything, std::span<const std::size_t> counts, std::size_t payloads_per_rank,
    std::optional<std::span<const std::size_t>> fixed_sizes, std::span<const int> senders = {});

}  // namespace lowcomm::compress_detail

#pragma once
// Token shards in llm.c's binary format, so that shards made by llm.c's data scripts (FineWeb,
// TinyStories, ...) train here unchanged and ours train there: a header of 256 little-endian
// int32 (magic 20240520, version 1, token count, the rest zero) followed by that many
// little-endian uint16 tokens, nothing after.
#include <cstdint>
#include <filesystem>
#include <span>

#include "lowcomm/data/token_buffer.hpp"

namespace lowcomm {

inline constexpr std::int32_t kTokenShardMagic = 20240520;
inline constexpr std::int32_t kTokenShardVersion = 1;
inline constexpr std::size_t kTokenShardHeaderInts = 256;
inline constexpr std::size_t kTokenShardHeaderBytes = kTokenShardHeaderInts * sizeof(std::int32_t);

// Writes PATH.partial and renames it to PATH once complete, so that a file named PATH is always
// a whole shard (a killed writer leaves only the .partial). Creates missing parent directories.
// Throws lowcomm::Error naming the file when it cannot be written, or when there are more tokens
// than the int32 count in the header can hold.
void write_token_shard(const std::filesystem::path& path, std::span<const std::uint16_t> tokens);

// Opens a shard (memory-mapped) and checks it: the file exists, the magic and version are
// llm.c's, the header's token count matches the file size exactly, and every token is below
// vocab_size (the model's vocabulary; a larger id would index past the embedding). Throws
// lowcomm::Error naming the file and what is wrong.
TokenBuffer read_token_shard(const std::filesystem::path& path, int vocab_size);

}  // namespace lowcomm

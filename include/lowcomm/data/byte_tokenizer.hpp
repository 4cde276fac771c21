#pragma once
// Byte-level tokenisation, the default: token = byte value, vocabulary 256. Lossless for any
// text (UTF-8 included), needs no vocabulary file, and keeps the embedding small, which suits a
// reference model meant for communication studies rather than state-of-the-art loss.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lowcomm {

inline constexpr int kByteVocabularySize = 256;

std::vector<std::uint16_t> byte_tokenize(std::string_view text);
// Throws lowcomm::Error for a token >= 256 (not produced by byte_tokenize).
std::string byte_detokenize(std::span<const std::uint16_t> tokens);

}  // namespace lowcomm

#include "lowcomm/data/byte_tokenizer.hpp"

#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm {

std::vector<std::uint16_t> byte_tokenize(std::string_view text) {
  std::vector<std::uint16_t> tokens(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    tokens[i] = static_cast<unsigned char>(text[i]);
  }
  return tokens;
}

std::string byte_detokenize(std::span<const std::uint16_t> tokens) {
  std::string text(tokens.size(), '\0');
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] >= kByteVocabularySize) {
      throw Error("token " + std::to_string(tokens[i]) + " at position " + std::to_string(i) +
                  " is not a byte: byte-level tokens are 0..255");
    }
    text[i] = static_cast<char>(static_cast<unsigned char>(tokens[i]));
  }
  return text;
}

}  // namespace lowcomm

// Token shards: what is written reads back, and every kind of broken file gives a lowcomm::Error
// that names the file and the problem (never a crash or garbage tokens).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "lowcomm/data/byte_tokenizer.hpp"
#include "lowcomm/data/token_shard.hpp"
#include "lowcomm/error.hpp"
#include "temp_dir.hpp"

namespace lowcomm {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using test::TempDir;

std::vector<std::uint16_t> some_tokens(std::size_t n, std::uint16_t below) {
  std::vector<std::uint16_t> tokens(n);
  for (std::size_t i = 0; i < n; ++i) tokens[i] = static_cast<std::uint16_t>((i * 7919 + 13) % below);
  return tokens;
}

std::vector<char> read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& file, const std::vector<char>& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void set_int32(std::vector<char>& bytes, std::size_t index, std::int32_t value) {
  std::memcpy(bytes.data() + index * 4, &value, 4);
}

// EXPECT that reading `file` throws lowcomm::Error whose message names the file and has `what`.
void expect_error(const std::filesystem::path& file, const std::string& what, int vocab = 65536) {
  try {
    read_token_shard(file, vocab);
    ADD_FAILURE() << "reading " << file << " did not throw";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(file.string()), HasSubstr(what)));
  }
}

TEST(TokenShard, RoundTripsTokensAndLeavesNoPartialFile) {
  const TempDir dir;
  const auto file = dir / "nested/shard.bin";
  const auto tokens = some_tokens(10007, 50257);
  write_token_shard(file, tokens);
  EXPECT_FALSE(std::filesystem::exists(dir / "nested/shard.bin.partial"));
  EXPECT_EQ(std::filesystem::file_size(file), 1024 + 2 * tokens.size());
  const TokenBuffer read = read_token_shard(file, 50257);
  EXPECT_EQ(read.name(), file.string());
  EXPECT_EQ(std::vector<std::uint16_t>(read.tokens().begin(), read.tokens().end()), tokens);
}

TEST(TokenShard, HeaderIsLlmCsLayout) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", std::vector<std::uint16_t>{1, 2, 65535});
  const std::vector<char> bytes = read_bytes(dir / "s.bin");
  ASSERT_EQ(bytes.size(), 1024u + 6u);
  std::int32_t header[256];
  std::memcpy(header, bytes.data(), 1024);
  EXPECT_EQ(header[0], 20240520);
  EXPECT_EQ(header[1], 1);
  EXPECT_EQ(header[2], 3);
  for (int i = 3; i < 256; ++i) EXPECT_EQ(header[i], 0) << i;
  EXPECT_EQ(static_cast<unsigned char>(bytes[1028]), 0xff);  // little-endian 65535
}

TEST(TokenShard, EmptyShardAndMovedBuffersWork) {
  const TempDir dir;
  write_token_shard(dir / "empty.bin", {});
  TokenBuffer empty = read_token_shard(dir / "empty.bin", 256);
  EXPECT_EQ(empty.size(), 0u);
  write_token_shard(dir / "s.bin", std::vector<std::uint16_t>{5, 6, 7});
  TokenBuffer a = read_token_shard(dir / "s.bin", 256);
  TokenBuffer b = std::move(a);
  EXPECT_EQ(a.size(), 0u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.tokens()[2], 7);
  a = std::move(b);
  EXPECT_EQ(a.tokens()[0], 5);
  TokenBuffer owned("memory", {9, 8});
  TokenBuffer moved(std::move(owned));
  EXPECT_EQ(moved.tokens()[1], 8);
}

TEST(TokenShard, ReplacesAnExistingShard) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", some_tokens(100, 256));
  write_token_shard(dir / "s.bin", some_tokens(10, 256));
  EXPECT_EQ(read_token_shard(dir / "s.bin", 256).size(), 10u);
}

TEST(TokenShard, MissingFileIsAnError) {
  const TempDir dir;
  expect_error(dir / "nope.bin", "does not exist");
}

TEST(TokenShard, FolderIsAnError) {
  const TempDir dir;
  expect_error(dir.path(), "not a regular file");
}

TEST(TokenShard, FileShorterThanHeaderIsAnError) {
  const TempDir dir;
  write_bytes(dir / "short.bin", std::vector<char>(100, 0));
  expect_error(dir / "short.bin", "shorter than the 1024-byte header");
}

TEST(TokenShard, WrongMagicIsAnError) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", some_tokens(10, 256));
  auto bytes = read_bytes(dir / "s.bin");
  set_int32(bytes, 0, 20240801);
  write_bytes(dir / "s.bin", bytes);
  expect_error(dir / "s.bin", "magic number 20240801");
}

TEST(TokenShard, WrongVersionIsAnError) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", some_tokens(10, 256));
  auto bytes = read_bytes(dir / "s.bin");
  set_int32(bytes, 1, 2);
  write_bytes(dir / "s.bin", bytes);
  expect_error(dir / "s.bin", "format version 2");
}

TEST(TokenShard, TruncatedTokensAreAnError) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", some_tokens(1000, 256));
  auto bytes = read_bytes(dir / "s.bin");
  bytes.erase(bytes.end() - 3, bytes.end());  // also leaves half a token
  write_bytes(dir / "s.bin", bytes);
  expect_error(dir / "s.bin", "header says 1000 tokens");
}

TEST(TokenShard, TrailingBytesAreAnError) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", some_tokens(10, 256));
  auto bytes = read_bytes(dir / "s.bin");
  bytes.push_back(0);
  bytes.push_back(0);
  write_bytes(dir / "s.bin", bytes);
  expect_error(dir / "s.bin", "file holds 22 bytes");
}

TEST(TokenShard, NegativeCountIsAnError) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", some_tokens(10, 256));
  auto bytes = read_bytes(dir / "s.bin");
  set_int32(bytes, 2, -5);
  write_bytes(dir / "s.bin", bytes);
  expect_error(dir / "s.bin", "header says -5 tokens");
}

TEST(TokenShard, TokenOutsideVocabularyIsAnError) {
  const TempDir dir;
  std::vector<std::uint16_t> tokens = some_tokens(50, 256);
  tokens[37] = 256;
  write_token_shard(dir / "s.bin", tokens);
  expect_error(dir / "s.bin", "token 256 at position 37 is not below the model's vocabulary size 256",
               256);
  EXPECT_NO_THROW(read_token_shard(dir / "s.bin", 257));
}

TEST(TokenShard, UnwritableFolderIsAnError) {
  const TempDir dir;
  write_bytes(dir / "file", {'x'});
  try {
    write_token_shard(dir / "file/s.bin", std::vector<std::uint16_t>{1});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("s.bin"));
  }
}

TEST(ByteTokenizer, RoundTripsEveryByte) {
  std::string text;
  for (int b = 0; b < 256; ++b) text += static_cast<char>(b);
  text += "h\xc3\xa9llo";  // UTF-8 stays bytes
  const auto tokens = byte_tokenize(text);
  ASSERT_EQ(tokens.size(), text.size());
  EXPECT_EQ(tokens[255], 255);
  EXPECT_EQ(tokens[257], 0xc3);
  EXPECT_EQ(byte_detokenize(tokens), text);
  EXPECT_THROW(byte_detokenize(std::vector<std::uint16_t>{65, 300}), Error);
}

}  // namespace
}  // namespace lowcomm

#pragma once
// A read-only run of tokens that the data loader takes windows from: either a memory-mapped shard
// file (so that the ranks on one node share the page cache instead of each holding a copy) or
// tokens generated in memory (the synthetic Markov source). Move-only; the span stays valid for
// the buffer's lifetime.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace lowcomm {

class TokenBuffer {
 public:
  TokenBuffer() = default;
  // Tokens held in memory; `name` says where they came from in error messages.
  TokenBuffer(std::string name, std::vector<std::uint16_t> tokens);
  // Maps `token_count` tokens that start `offset_bytes` into an open file; takes ownership of
  // nothing (the mapping survives closing the file). Used by read_token_shard().
  static TokenBuffer map_file(std::string name, int fd, std::size_t offset_bytes,
                              std::size_t token_count);
  ~TokenBuffer();
  TokenBuffer(TokenBuffer&& other) noexcept;
  TokenBuffer& operator=(TokenBuffer&& other) noexcept;
  TokenBuffer(const TokenBuffer&) = delete;
  TokenBuffer& operator=(const TokenBuffer&) = delete;

  std::span<const std::uint16_t> tokens() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  void release() noexcept;

  std::string name_;
  std::vector<std::uint16_t> owned_;
  void* mapping_ = nullptr;  // the whole mapped range (page-aligned), or null
  std::size_t mapping_bytes_ = 0;
  const std::uint16_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace lowcomm

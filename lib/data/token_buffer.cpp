#include "lowcomm/data/token_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "lowcomm/error.hpp"

namespace lowcomm {

TokenBuffer::TokenBuffer(std::string name, std::vector<std::uint16_t> tokens)
    : name_(std::move(name)), owned_(std::move(tokens)), data_(owned_.data()),
      size_(owned_.size()) {}

TokenBuffer TokenBuffer::map_file(std::string name, int fd, std::size_t offset_bytes,
                                  std::size_t token_count) {
  TokenBuffer buffer;
  buffer.name_ = std::move(name);
  if (token_count == 0) return buffer;  // mmap of zero bytes fails; nothing to map anyway
  // mmap needs a page-aligned offset: map from the page start and point past the rest.
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t aligned = offset_bytes / page * page;
  const std::size_t bytes = offset_bytes - aligned + token_count * sizeof(std::uint16_t);
  void* mapping = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(aligned));
  if (mapping == MAP_FAILED) {
    throw Error("cannot memory-map " + buffer.name_ + ": " + std::strerror(errno));
  }
  buffer.mapping_ = mapping;
  buffer.mapping_bytes_ = bytes;
  buffer.data_ = reinterpret_cast<const std::uint16_t*>(static_cast<const char*>(mapping) +
                                                        (offset_bytes - aligned));
  buffer.size_ = token_count;
  return buffer;
}

TokenBuffer::~TokenBuffer() { release(); }

TokenBuffer::TokenBuffer(TokenBuffer&& other) noexcept { *this = std::move(other); }

TokenBuffer& TokenBuffer::operator=(TokenBuffer&& other) noexcept {
  if (this == &other) return *this;
  release();
  name_ = std::move(other.name_);
  const bool owned = other.mapping_ == nullptr && other.data_ == other.owned_.data();
  owned_ = std::move(other.owned_);  // a moved vector keeps its storage, but say it explicitly:
  data_ = owned ? owned_.data() : other.data_;
  size_ = other.size_;
  mapping_ = std::exchange(other.mapping_, nullptr);
  mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
  other.data_ = nullptr;
  other.size_ = 0;
  other.owned_.clear();
  return *this;
}

void TokenBuffer::release() noexcept {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  mapping_ = nullptr;
  mapping_bytes_ = 0;
  owned_.clear();
  data_ = nullptr;
  size_ = 0;
}

}  // namespace lowcomm

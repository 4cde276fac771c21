#include "lowcomm/data/token_shard.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>

#include "lowcomm/error.hpp"

namespace lowcomm {

// The format is little-endian on disk and we copy it to and from memory as is.
static_assert(std::endian::native == std::endian::little,
              "token shards are read and written as little-endian memory images");

namespace {

// Closes a POSIX file descriptor on every path out of read_token_shard.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void write_all(std::FILE* file, const void* data, std::size_t bytes, const std::string& name) {
  if (bytes != 0 && std::fwrite(data, 1, bytes, file) != bytes) {
    const std::string reason = std::strerror(errno);
    std::fclose(file);
    throw Error(fmt::format("cannot write token shard {}: {}", name, reason));
  }
}

}  // namespace

void write_token_shard(const std::filesystem::path& path, std::span<const std::uint16_t> tokens) {
  if (tokens.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw Error(fmt::format("cannot write token shard {}: {} tokens do not fit the header's int32 "
                            "count; split them into several shards", path.string(),
                            tokens.size()));
  }
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  if (error) {
    throw Error(fmt::format("cannot create the folder {} for token shard {}: {}",
                            path.parent_path().string(), path.string(), error.message()));
  }
  std::filesystem::path partial = path;
  partial += ".partial";
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  if (file == nullptr) {
    throw Error(fmt::format("cannot create token shard {}: {}", partial.string(),
                            std::strerror(errno)));
  }
  std::array<std::int32_t, kTokenShardHeaderInts> header{};
  header[0] = kTokenShardMagic;
  header[1] = kTokenShardVersion;
  header[2] = static_cast<std::int32_t>(tokens.size());
  write_all(file, header.data(), kTokenShardHeaderBytes, partial.string());
  write_all(file, tokens.data(), tokens.size_bytes(), partial.string());
  if (std::fclose(file) != 0) {
    throw Error(fmt::format("cannot write token shard {}: {}", partial.string(),
                            std::strerror(errno)));
  }
  std::filesystem::rename(partial, path, error);
  if (error) {
    throw Error(fmt::format("cannot rename {} to {}: {}", partial.string(), path.string(),
                            error.message()));
  }
}

TokenBuffer read_token_shard(const std::filesystem::path& path, int vocab_size) {
  const std::string name = path.string();
  const FileDescriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int code = errno;
    throw Error(code == ENOENT
                    ? fmt::format("token shard {} does not exist", name)
                    : fmt::format("cannot open token shard {}: {}", name, std::strerror(code)));
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    throw Error(fmt::format("token shard {} is not a regular file", name));
  }
  const auto file_bytes = static_cast<std::uint64_t>(info.st_size);
  std::array<std::int32_t, kTokenShardHeaderInts> header{};
  if (file_bytes < kTokenShardHeaderBytes ||
      pread(fd.get(), header.data(), kTokenShardHeaderBytes, 0) !=
          static_cast<ssize_t>(kTokenShardHeaderBytes)) {
    throw Error(fmt::format("token shard {} is {} bytes, shorter than the {}-byte header: it is "
                            "truncated or not a token shard", name, file_bytes,
                            kTokenShardHeaderBytes));
  }
  if (header[0] != kTokenShardMagic) {
    throw Error(fmt::format("token shard {} has magic number {} where llm.c's format has {}: it "
                            "is not a token shard (or was written on a big-endian machine)",
                            name, header[0], kTokenShardMagic));
  }
  if (header[1] != kTokenShardVersion) {
    throw Error(fmt::format("token shard {} has format version {}; lowcomm reads version {} "
                            "(uint16 tokens)", name, header[1], kTokenShardVersion));
  }
  const std::int64_t count = header[2];
  const std::uint64_t payload = file_bytes - kTokenShardHeaderBytes;
  if (count < 0 || payload != static_cast<std::uint64_t>(count) * sizeof(std::uint16_t)) {
    throw Error(fmt::format("token shard {}: the header says {} tokens ({} bytes after the header) "
                            "but the file holds {} bytes after it: the file is truncated or "
                            "corrupt; write it again", name, count,
                            count * static_cast<std::int64_t>(sizeof(std::uint16_t)), payload));
  }
  TokenBuffer buffer = TokenBuffer::map_file(name, fd.get(), kTokenShardHeaderBytes,
                                             static_cast<std::size_t>(count));
  const auto tokens = buffer.tokens();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] >= vocab_size) {
      throw Error(fmt::format("token shard {}: token {} at position {} is not below the model's "
                              "vocabulary size {}: the shard was made with another tokeniser, or "
                              "data.vocab_size is too small", name, tokens[i], i, vocab_size));
    }
  }
  return buffer;
}

}  // namespace lowcomm

// The readers of small files a user or a tool writes: the per-pair links CSV (network.links) and
// llm.c's token shards (data.source = shard). The first input byte chooses the reader and its
// parameter (the job's rank count, the vocabulary size); the rest is the file, written to a
// temporary path of this process. Each reads the file or throws lowcomm::Error.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_input.hpp"
#include "lowcomm/comm/link_file.hpp"
#include "lowcomm/data/token_shard.hpp"

namespace lowcomm::fuzz {
namespace {

const std::filesystem::path& scratch_file() {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("lowcomm-fuzz-" + std::to_string(::getpid()) + ".bin");
  return path;
}

void run(FuzzInput& in) {
  const std::uint8_t choice = in.take_byte();
  const std::span<const std::byte> file = in.take_rest();
  {
    std::ofstream out(scratch_file(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  }
  if (choice % 2 == 0) {
    (void)read_link_file(scratch_file(), 1 + (choice >> 1) % 8);
  } else {
    (void)read_token_shard(scratch_file(), 1 + (choice >> 1) * 509);
  }
}

}  // namespace
}  // namespace lowcomm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lowcomm::fuzz::FuzzInput in(data, size);
  lowcomm::fuzz::only_lowcomm_errors([&] { lowcomm::fuzz::run(in); });
  return 0;
}

// The splitter of an all-gather round's frames (lib/compress/gathered_frames.hpp), which cuts what
// every rank sent into its payloads by the size tables inside the frames, or by sizes all ranks
// agree on. The input chooses the rank count, the payloads per rank, the fixed sizes (or none) and
// the frame lengths, and gives the bytes. Every payload cut must lie inside what arrived, and the
// frames' payloads must tile it; or the splitter throws lowcomm::Error.
#include <cstdlib>
#include <vector>

#include "fuzz_input.hpp"
#include "gathered_frames.hpp"

namespace lowcomm::fuzz {
namespace {

void run(FuzzInput& in) {
  const std::size_t ranks = 1 + in.take_byte() % 5;
  const std::size_t per_rank = in.take_byte() % 6;
  std::vector<std::size_t> fixed;
  const bool with_fixed = in.take_byte() % 2 == 0;
  if (with_fixed) {
    for (std::size_t p = 0; p < per_rank; ++p) fixed.push_back(in.take_uint(2) % 64);
  }
  std::vector<std::size_t> counts(ranks);
  for (std::size_t& c : counts) c = in.take_uint(2) % 256;
  const std::span<const std::byte> everything = in.take_rest();
  const auto cut = compress_detail::split_frames(
      everything, counts, per_rank,
      with_fixed ? std::optional<std::span<const std::size_t>>(fixed) : std::nullopt);
  const std::byte* begin = everything.data();
  const std::byte* end = begin + everything.size();
  for (const auto& payloads : cut) {
    for (const std::span<const std::byte> p : payloads) {
      if (!p.empty() && (p.data() < begin || p.data() + p.size() > end)) std::abort();
    }
  }
}

}  // namespace
}  // namespace lowcomm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lowcomm::fuzz::FuzzInput in(data, size);
  lowcomm::fuzz::only_lowcomm_errors([&] { lowcomm::fuzz::run(in); });
  return 0;
}

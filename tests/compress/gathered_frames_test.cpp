// The framing of gathered payloads: valid frames come apart into exactly the payloads that went
// in; truncated, extended or corrupted frames (other ranks' bytes) throw lowcomm::Error and never
// read outside what arrived (AddressSanitizer checks that in the debug preset).
#include "gathered_frames.hpp"

#include <gtest/gtest.h>

#include <random>

#include "lowcomm/error.hpp"

namespace lowcomm::compress_detail {
namespace {

using Bytes = std::vector<std::byte>;

Bytes random_bytes(std::size_t n, std::mt19937& random) {
  Bytes b(n);
  for (std::byte& x : b) x = static_cast<std::byte>(std::uniform_int_distribution<int>(0, 255)(random));
  return b;
}

// W ranks with `units` payloads each, variable sizes: frames concatenated as the all-gather does.
struct Round {
  std::vector<std::vector<Bytes>> payloads;  // [rank][unit]
  Bytes everything;
  std::vector<std::size_t> counts;
};

Round make_round(int world, std::size_t units, bool with_sizes, std::mt19937& random) {
  Round round;
  std::vector<std::size_t> fixed(units);
  for (std::size_t& size : fixed) size = std::uniform_int_distribution<std::size_t>(0, 40)(random);
  for (int w = 0; w < world; ++w) {
    std::vector<Bytes> mine;
    std::vector<std::span<const std::byte>> views;
    for (std::size_t u = 0; u < units; ++u) {
      const std::size_t size = with_sizes ? std::uniform_int_distribution<std::size_t>(0, 40)(random) : fixed[u];
      mine.push_back(random_bytes(size, random));
    }
    for (const Bytes& b : mine) views.emplace_back(b);
    const Bytes frame = frame_payloads(views, with_sizes);
    round.everything.insert(round.everything.end(), frame.begin(), frame.end());
    round.counts.push_back(frame.size());
    round.payloads.push_back(std::move(mine));
  }
  return round;
}

std::vector<std::size_t> sizes_of(const Round& round) {
  std::vector<std::size_t> sizes;
  for (const Bytes& b : round.payloads[0]) sizes.push_back(b.size());
  return sizes;
}

TEST(GatheredFrames, ValidFramesComeApartIntoTheirPayloads) {
  std::mt19937 random(1);
  for (bool with_sizes : {true, false}) {
    for (int world : {1, 2, 5}) {
      const Round round = make_round(world, 4, with_sizes, random);
      const std::vector<std::size_t> sizes = sizes_of(round);
      const auto split = split_frames(round.everything, round.counts, 4,
                                      with_sizes ? std::nullopt : std::optional(std::span<const std::size_t>(sizes)));
      for (int w = 0; w < world; ++w) {
        for (std::size_t u = 0; u < 4; ++u) {
          const auto got = split[u][static_cast<std::size_t>(w)];
          EXPECT_EQ(Bytes(got.begin(), got.end()), round.payloads[static_cast<std::size_t>(w)][u]);
        }
      }
    }
  }
}

TEST(GatheredFrames, MalformedFramesThrowNeverOverrun) {
  std::mt19937 random(2);
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const bool with_sizes = trial % 2 == 0;
    Round round = make_round(3, 3, with_sizes, random);
    const std::vector<std::size_t> sizes = sizes_of(round);
    switch (trial % 5) {
      case 0:  // a rank's frame shorter than it says: cut the counts and the bytes
        if (round.counts[1] > 0) {
          round.counts[1] -= 1;
          round.everything.erase(round.everything.begin() + static_cast<std::ptrdiff_t>(round.counts[0]));
        }
        break;
      case 1:  // counts that add up to more than arrived
        round.counts[2] += 7;
        break;
      case 2:  // corrupt bytes (size table entries included)
        for (int i = 0; i < 3 && !round.everything.empty(); ++i) {
          round.everything[std::uniform_int_distribution<std::size_t>(0, round.everything.size() - 1)(random)] =
              static_cast<std::byte>(std::uniform_int_distribution<int>(0, 255)(random));
        }
        break;
      case 3:  // trailing bytes in a frame
        round.everything.insert(round.everything.begin() + static_cast<std::ptrdiff_t>(round.counts[0]), std::byte{1});
        round.counts[0] += 1;
        break;
      default:  // a size table that claims everything
        std::fill(round.everything.begin(), round.everything.begin() + std::min<std::ptrdiff_t>(4, static_cast<std::ptrdiff_t>(round.everything.size())), std::byte{0xFF});
    }
    try {
      split_frames(round.everything, round.counts, 3,
                   with_sizes ? std::nullopt : std::optional(std::span<const std::size_t>(sizes)));
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000) << "most of these frames are malformed";
}

// Frames of the present ranks only (rank 1 of 3 absent): a short frame is named by its sender.
TEST(GatheredFrames, ErrorNamesTheSenderOfAShortFrame) {
  const std::vector<std::byte> everything(7);  // rank 0's 4 bytes, then 3 of rank 2's 4
  const std::vector<std::size_t> counts{4, 3}, sizes{4};
  const std::vector<int> senders{0, 2};
  try {
    split_frames(everything, counts, 1, std::span<const std::size_t>(sizes), senders);
    ADD_FAILURE() << "a short frame was cut";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("rank 2 sent"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace lowcomm::compress_detail

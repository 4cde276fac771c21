// Per-pair links: the model prices each message by its path (hand-computed ring costs), and the
// links file is read as docs/network-model.md says, refusing each malformed line by line and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lowcomm/comm/link_file.hpp"
#include "lowcomm/comm/network_model.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr double kAlpha = 1e-3;
const Link kAccess{.latency_s = kAlpha, .upload_bytes_per_s = 1e9, .download_bytes_per_s = 1e9};

// A ring all-gather of W blocks of `block` bytes sends rank r's message to r + 1 in each of its
// W - 1 rounds: one slow pair on that ring slows every round, the same pair reversed none.
TEST(PairLinks, ASlowPairOnTheRingBoundsEveryRoundAndTheReversePairNone) {
  const int w = 3;
  const std::uint64_t block = 1'000'000;
  const std::vector<std::uint64_t> blocks(w, block);
  const NetworkModel uniform(kAccess);
  const double round = kAlpha + static_cast<double>(block) / 1e9;
  EXPECT_NEAR(uniform.all_gather(AllGatherAlgorithm::Ring, blocks).seconds, 2 * round, 1e-12);

  NetworkModel slow_forward(kAccess);
  slow_forward.set_pair_link(1, 2, PairLink{.latency_s = 0.05, .bytes_per_s = 1e7});
  EXPECT_NEAR(slow_forward.all_gather(AllGatherAlgorithm::Ring, blocks).seconds,
              2 * (0.05 + static_cast<double>(block) / 1e7), 1e-12);

  NetworkModel slow_backward(kAccess);
  slow_backward.set_pair_link(2, 1, PairLink{.latency_s = 0.05, .bytes_per_s = 1e7});
  EXPECT_NEAR(slow_backward.all_gather(AllGatherAlgorithm::Ring, blocks).seconds, 2 * round, 1e-12);
  // Bytes are the algorithm's, whatever the links.
  EXPECT_EQ(slow_forward.all_gather(AllGatherAlgorithm::Ring, blocks).bytes_sent,
            uniform.all_gather(AllGatherAlgorithm::Ring, blocks).bytes_sent);

  // A fast pair path does not beat the ranks' own access links.
  NetworkModel fast(kAccess);
  fast.set_pair_link(0, 1, PairLink{.latency_s = 0.0, .bytes_per_s = 1e12});
  EXPECT_NEAR(fast.all_gather(AllGatherAlgorithm::Ring, blocks).seconds, 2 * round, 1e-12);

  EXPECT_THROW(NetworkModel(kAccess).set_pair_link(1, 1, PairLink{}), ConfigError);
  EXPECT_THROW(NetworkModel(kAccess).set_pair_link(0, 1, PairLink{.latency_s = -1}), ConfigError);
  EXPECT_THROW(NetworkModel(kAccess).set_pair_link(0, 1, PairLink{.bytes_per_s = 0}), ConfigError);
}

class LinkFile : public testing::Test {
 protected:
  std::filesystem::path write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_ =
      std::filesystem::temp_directory_path() / ("lowcomm-links-" + std::to_string(getpid()) + ".csv");
};

TEST_F(LinkFile, ReadsEveryPairSkippingCommentsAndBlankLines) {
  const auto entries = read_link_file(write("# two regions\nsource,destination,latency_ms,bandwidth_mbps\n"
                                            "0, 1, 35, 200\n\n1,0,35.5,100\n"),
                                      2);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].source, 0);
  EXPECT_EQ(entries[0].destination, 1);
  EXPECT_DOUBLE_EQ(entries[0].link.latency_s, 0.035);
  EXPECT_DOUBLE_EQ(entries[0].link.bytes_per_s, mbps(200));
  EXPECT_DOUBLE_EQ(entries[1].link.latency_s, 0.0355);
}

TEST_F(LinkFile, RefusesEachMistakeNamingTheLineAndTheField) {
  const std::string header = "source,destination,latency_ms,bandwidth_mbps\n";
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"source,destination,latency\n0,1,3\n", ":1: the first line must be the header"},
      {header + "0,1,3\n", ":2: 3 fields where the header has 4"},
      {header + "0,1,abc,10\n", ":2: latency_ms = 'abc' must be a finite, >= 0, number"},
      {header + "0,1,3,0\n", ":2: bandwidth_mbps = '0' must be a positive number"},
      {header + "0,4,3,10\n", ":2: destination = '4' is not a rank of this 2-rank job (0 to 1)"},
      {header + "1,1,3,10\n", ":2: source and destination are both rank 1"},
      {header + "0,1,3,10\n# again\n0,1,4,10\n", ":4: the pair 0 -> 1 is listed already (line 2)"},
      {"", ":1: no header"},
  };
  for (const auto& [text, message] : cases) {
    const std::filesystem::path file = write(text);
    EXPECT_THAT([&] { read_link_file(file, 2); }, ThrowsMessage<ConfigError>(HasSubstr(file.string() + message)))
        << text;
  }
  EXPECT_THAT([] { read_link_file("/no/such/links.csv", 2); },
              ThrowsMessage<ConfigError>(HasSubstr("cannot read /no/such/links.csv")));
}

}  // namespace
}  // namespace lowcomm

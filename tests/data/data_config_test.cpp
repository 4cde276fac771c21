// data.* keys and make_training_data(): each source builds a loader, and each mistake is a
// ConfigError naming the key and what to do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lowcomm/data/brown_corpus.hpp"
#include "lowcomm/data/data_config.hpp"
#include "lowcomm/data/token_shard.hpp"
#include "lowcomm/error.hpp"
#include "temp_dir.hpp"

namespace lowcomm {
namespace {

using ::testing::HasSubstr;
using test::TempDir;

Config config_with(std::vector<std::string> overrides) {
  ConfigSchema schema;
  add_data_keys(schema);
  return Config::defaults(schema, overrides);
}

std::string config_error(const Config& config, int rank = 0, int world = 1) {
  try {
    make_training_data(config, rank, world);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

TEST(DataConfig, DefaultsAreTheBrownCorpus) {
  const Config config = config_with({});
  EXPECT_EQ(config.get_string("data.source"), "brown");
  EXPECT_EQ(config.get_string("data.dir"), "data/brown");
  EXPECT_EQ(config.get_int("data.vocab_size"), 256);
  EXPECT_EQ(config.get_int("data.markov.order"), 1);
}

TEST(DataConfig, UnknownSourceIsRejectedByTheSchema) {
  EXPECT_THROW(config_with({"data.source=wikipedia"}), ConfigError);
}

TEST(DataConfig, MarkovSourceReportsItsLossFloor) {
  const Config config = config_with({"data.source=markov", "data.markov.train_tokens=20000",
                                     "data.markov.val_tokens=5000", "data.seq_len=32",
                                     "data.val_windows=8", "data.markov.successors=4"});
  const TrainingData data = make_training_data(config, 1, 2);
  ASSERT_TRUE(data.loss_floor.has_value());
  ASSERT_TRUE(data.val_loss_floor.has_value());
  EXPECT_GT(*data.loss_floor, 0.0);
  EXPECT_LT(*data.loss_floor, std::log(256.0) / 2);
  EXPECT_NEAR(*data.val_loss_floor, *data.loss_floor, 0.3);
  EXPECT_EQ(data.loader.train_tokens().size(), 20000u);
  EXPECT_EQ(data.loader.val_windows_per_rank(), 4);
  EXPECT_THAT(data.description, HasSubstr("markov: order 1, 4 successors"));
  // Every rank generates the same streams: rank 0's loader reads the same tokens.
  const TrainingData rank0 = make_training_data(config, 0, 2);
  EXPECT_TRUE(std::equal(rank0.loader.train_tokens().tokens().begin(),
                         rank0.loader.train_tokens().tokens().end(),
                         data.loader.train_tokens().tokens().begin()));
  EXPECT_EQ(*rank0.val_loss_floor, *data.val_loss_floor);
}

TEST(DataConfig, MarkovMistakesNameTheKey) {
  EXPECT_THAT(config_error(config_with({"data.source=markov", "data.markov.order=3"})),
              HasSubstr("data.markov.order = 3"));
  EXPECT_THAT(config_error(config_with({"data.source=markov", "data.markov.uniform_mix=0"})),
              HasSubstr("data.markov.uniform_mix"));
}

TEST(DataConfig, ShardsNeedBothPaths) {
  EXPECT_THAT(config_error(config_with({"data.source=shards"})), HasSubstr("needs data.train"));
  EXPECT_THAT(config_error(config_with({"data.source=shards", "data.train=a.bin"})),
              HasSubstr("needs data.val"));
}

TEST(DataConfig, ShardsAreReadAndChecked) {
  const TempDir dir;
  std::vector<std::uint16_t> tokens(4000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i % 300);
  write_token_shard(dir / "train.bin", tokens);
  write_token_shard(dir / "val.bin", tokens);
  const std::string train = "data.train=" + (dir / "train.bin").string();
  const std::string val = "data.val=" + (dir / "val.bin").string();
  // Token 299 does not fit the default byte vocabulary.
  try {
    make_training_data(config_with({"data.source=shards", train, val}), 0, 1);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("train.bin: token 256"));
  }
  const TrainingData data = make_training_data(
      config_with({"data.source=shards", train, val, "data.vocab_size=300", "data.seq_len=64"}),
      0, 1);
  EXPECT_EQ(data.vocab_size, 300);
  EXPECT_FALSE(data.loss_floor.has_value());
  EXPECT_EQ(data.loader.train_batch(0).tokens.size(), 8u * 64u);
}

TEST(DataConfig, UnpreparedBrownSaysWhichCommandToRun) {
  const TempDir dir;
  const std::string message =
      config_error(config_with({"data.dir=" + (dir / "brown").string()}));
  EXPECT_THAT(message, HasSubstr("lowcomm prepare-data --out " + (dir / "brown").string()));
  EXPECT_THAT(config_error(config_with({"data.vocab_size=100"})), HasSubstr("byte-tokenised"));
}

TEST(DataConfig, PreparedBrownLoads) {
  const TempDir dir;
  // 20 copies of the sample documents: one goes to validation.
  std::filesystem::create_directories(dir / "source");
  for (int i = 0; i < 20; ++i) {
    const std::string name = std::string("ca") + static_cast<char>('0' + i / 10) +
                             static_cast<char>('0' + i % 10);
    std::filesystem::copy_file(std::filesystem::path(LOWCOMM_BROWN_SAMPLE_DIR) / "ca01",
                               dir / "source" / name);
  }
  prepare_brown_corpus(dir / "source", dir / "brown");
  const TrainingData data = make_training_data(
      config_with({"data.dir=" + (dir / "brown").string(), "data.seq_len=64",
                   "data.val_windows=4"}), 0, 2);
  EXPECT_EQ(data.loader.val_windows_per_rank(), 2);
  EXPECT_THAT(data.description, HasSubstr("train.bin"));
}

}  // namespace
}  // namespace lowcomm

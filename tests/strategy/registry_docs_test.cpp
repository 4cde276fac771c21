// Every registered built-in has its row in the docs: a compressor in docs/plugins.md's table of
// built-ins ("| `name` |"), a strategy in docs/strategies.md's table, an optimizer among
// docs/optimizers.md's keys ("| `optimizer.name.").
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lowcomm/compress/registry.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm {
namespace {

std::string doc(const std::string& name) {
  std::ifstream file(std::string(LOWCOMM_DOCS_DIR) + "/" + name);
  EXPECT_TRUE(file) << "cannot read docs/" << name;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Whether a line of `text` begins with `row`.
bool has_row(const std::string& text, const std::string& row) {
  return text.starts_with(row) || text.find("\n" + row) != std::string::npos;
}

TEST(RegistryDocs, EveryCompressorHasItsRowInPlugins) {
  const std::string plugins = doc("plugins.md");
  for (const std::string& name : CompressorRegistry::global().names()) {
    EXPECT_TRUE(has_row(plugins, "| `" + name + "` |")) << "docs/plugins.md has no row for compressor " << name;
  }
}

TEST(RegistryDocs, EveryStrategyHasItsRowInStrategies) {
  const std::string strategies = doc("strategies.md");
  for (const std::string& name : StrategyRegistry::global().names()) {
    EXPECT_TRUE(has_row(strategies, "| `" + name + "`")) << "docs/strategies.md has no row for strategy " << name;
  }
}

TEST(RegistryDocs, EveryOptimizerHasItsKeysInOptimizers) {
  const std::string optimizers = doc("optimizers.md");
  for (const std::string& name : OptimizerRegistry::global().names()) {
    EXPECT_TRUE(has_row(optimizers, "| `optimizer." + name + "."))
        << "docs/optimizers.md has no key row for optimizer " << name;
  }
}

TEST(RegistryDocs, ARowIsFoundOnlyAtTheStartOfALine) {
  EXPECT_TRUE(has_row("| `topk` | x\n", "| `topk` |"));
  EXPECT_TRUE(has_row("intro\n| `topk` | x\n", "| `topk` |"));
  EXPECT_FALSE(has_row("see | `topk` | inline\n", "| `topk` |"));
  EXPECT_FALSE(has_row("| `topk2` | x\n", "| `topk` |"));
}

}  // namespace
}  // namespace lowcomm

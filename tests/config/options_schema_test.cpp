// A section's options declared once (config/options_schema.hpp): the keys it lists carry the
// struct's defaults, types and limits, and reading a resolved configuration fills every member
// from its key, optional ones only when set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using testing::HasSubstr;

struct Example {
  double rate = 0.25;
  float decay = 0.5f;
  std::int64_t steps = 7;
  std::uint64_t start = 3;
  bool enabled = true;
  std::string mode = "fast";
  std::optional<std::int64_t> k;
  std::optional<double> scale = 2.0;
  int untouched = 11;  // no field: keeps its default
};

const OptionsSchema<Example>& example_schema() {
  static const auto schema = OptionsSchema<Example>()
                                 .field("rate", &Example::rate, "a rate", {.min = 0.0, .max = 1.0})
                                 .field("decay", &Example::decay, "a float member")
                                 .field("steps", &Example::steps, "a count", {.min = 1.0})
                                 .field("start", &Example::start, "an unsigned count", {.min = 0.0})
                                 .field("enabled", &Example::enabled, "a switch")
                                 .field("mode", &Example::mode, "a choice", {.choices = {"fast", "slow"}})
                                 .field("k", &Example::k, "optional, unset by default", {.min = 1.0})
                                 .field("scale", &Example::scale, "optional with a default")
                                 .alias({.path = "old_rate", .type = ValueType::Float,
                                         .description = "another name", .alias_of = "section.rate"});
  return schema;
}

ConfigSchema schema_with_section() {
  ConfigSchema schema;
  for (ConfigKey key : example_schema().keys()) {
    key.path = "section." + key.path;
    schema.add(std::move(key));
  }
  return schema;
}

TEST(OptionsSchema, ListsEachFieldWithTheStructsDefaultAndLimits) {
  const std::vector<ConfigKey>& keys = example_schema().keys();
  ASSERT_EQ(keys.size(), 9u);
  EXPECT_EQ(keys[0].path, "rate");
  EXPECT_EQ(keys[0].type, ValueType::Float);
  EXPECT_EQ(std::get<double>(*keys[0].default_value), 0.25);
  EXPECT_EQ(keys[0].max, 1.0);
  EXPECT_EQ(keys[1].type, ValueType::Float);
  EXPECT_EQ(std::get<double>(*keys[1].default_value), 0.5);
  EXPECT_EQ(keys[2].type, ValueType::Integer);
  EXPECT_EQ(std::get<std::int64_t>(*keys[2].default_value), 7);
  EXPECT_EQ(keys[4].type, ValueType::Boolean);
  EXPECT_EQ(keys[5].type, ValueType::String);
  EXPECT_EQ(keys[5].choices, (std::vector<std::string>{"fast", "slow"}));
  EXPECT_TRUE(keys[6].optional);
  EXPECT_FALSE(keys[6].default_value.has_value());
  EXPECT_FALSE(keys[7].optional);
  EXPECT_EQ(std::get<double>(*keys[7].default_value), 2.0);
  EXPECT_EQ(keys[8].alias_of, "section.rate");
}

TEST(OptionsSchema, ReadsEveryMemberFromItsKey) {
  const Config defaults = Config::defaults(schema_with_section());
  const Example d = example_schema().read(ComponentParameters(defaults, "section"));
  EXPECT_EQ(d.rate, 0.25);
  EXPECT_EQ(d.steps, 7);
  EXPECT_EQ(d.mode, "fast");
  EXPECT_FALSE(d.k.has_value());
  EXPECT_EQ(d.scale, 2.0);

  const std::vector<std::string> overrides = {"section.old_rate=0.75", "section.decay=0.125", "section.steps=9",
                                              "section.start=4",        "section.enabled=false", "section.mode=slow",
                                              "section.k=5",            "section.scale=0.5"};
  const Config set = Config::defaults(schema_with_section(), overrides);
  const Example e = example_schema().read(ComponentParameters(set, "section"));
  EXPECT_EQ(e.rate, 0.75);  // set through its alias
  EXPECT_EQ(e.decay, 0.125f);
  EXPECT_EQ(e.steps, 9);
  EXPECT_EQ(e.start, 4u);
  EXPECT_FALSE(e.enabled);
  EXPECT_EQ(e.mode, "slow");
  EXPECT_EQ(e.k, 5);
  EXPECT_EQ(e.scale, 0.5);
  EXPECT_EQ(e.untouched, 11);
}

Config with(const std::string& setting) {
  const std::vector<std::string> overrides = {setting};
  return Config::defaults(schema_with_section(), overrides);
}

TEST(OptionsSchema, ItsLimitsAreTheSchemasChecks) {
  try {
    (void)with("section.rate=2");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("section.rate"));
  }
  EXPECT_THROW((void)with("section.mode=medium"), ConfigError);
  EXPECT_THROW((void)with("section.k=0"), ConfigError);
}

}  // namespace
}  // namespace lowcomm

namespace lowcomm {
namespace {

// What a refused --resume names: each path whose value differs, with both values.
TEST(ConfigChanges, NameEachDifferingPathWithBothValues) {
  const std::vector<std::string> before = {"section.rate=0.5"};
  const std::vector<std::string> after = {"section.rate=0.75", "section.k=3"};
  const Config earlier = Config::defaults(schema_with_section(), before);
  const Config now = Config::defaults(schema_with_section(), after);
  EXPECT_EQ(now.changes_since(earlier),
            (std::vector<std::string>{"section.k = 3 (was unset)", "section.rate = 0.75 (was 0.5)"}));
  EXPECT_TRUE(now.changes_since(now).empty());
}

}  // namespace
}  // namespace lowcomm

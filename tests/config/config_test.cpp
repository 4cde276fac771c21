// Configuration loading, validation messages, wildcard keys and the resolved text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using Overrides = std::vector<std::string>;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

ConfigSchema test_schema() {
  ConfigSchema schema;
  schema.string("network.scenario", "datacenter", "bandwidth scenario",
                {"consumer", "datacenter", "worldwide"})
      .real("network.latency_ms", 1.0, "link latency", 0.0)
      .add({.path = "network.rank.*.upload_mbps", .type = ValueType::Float,
            .description = "upload bandwidth of one rank", .min = 0.0})
      .add({.path = "network.rank.*.download_mbps", .type = ValueType::Float,
            .default_value = 100.0, .description = "download bandwidth of one rank"})
      .integer("bench.iterations", 10, "timed iterations", 1, 1000)
      .boolean("bench.verbose", false, "print every iteration")
      .string("bench.label", "", "free text")
      .real("bench.scale", 1.0, "any number")
      .integer("seed", 42, "random seed");
  return schema;
}

// The ConfigError message of loading `toml` (as "config.toml") with `overrides`; fails the test
// when loading succeeds.
std::string load_error(std::string_view toml, const Overrides& overrides = {},
                       const ConfigSchema& schema = test_schema()) {
  try {
    Config::from_string(toml, schema, overrides, "config.toml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "loading did not throw ConfigError:\n" << toml;
  return {};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// ---- values and defaults ----------------------------------------------------------------------

TEST(Config, DefaultsAreFilled) {
  const Config config = Config::defaults(test_schema());
  EXPECT_EQ(config.get_string("network.scenario"), "datacenter");
  EXPECT_EQ(config.get_int("bench.iterations"), 10);
  EXPECT_FALSE(config.get_bool("bench.verbose"));
  EXPECT_DOUBLE_EQ(config.get_double("network.latency_ms"), 1.0);
  EXPECT_EQ(config.get_int("seed"), 42);
  EXPECT_TRUE(config.instances("network.rank.*.upload_mbps").empty());
}

TEST(Config, WithSetsTypedValuesCheckedAgainstTheSchema) {
  const Config base = Config::from_string("seed = 7\n", test_schema(), Overrides{"bench.label=x"});
  const std::vector<ConfigSetting> settings{{"network.scenario", "consumer"},
                                            {"network.latency_ms", std::int64_t{30}},  // int for a Float key
                                            {"network.rank.2.upload_mbps", 10.0},
                                            {"bench.verbose", true}};
  const Config derived = base.with(settings);
  EXPECT_EQ(derived.get_string("network.scenario"), "consumer");
  EXPECT_DOUBLE_EQ(derived.get_double("network.latency_ms"), 30.0);
  EXPECT_EQ(derived.instances("network.rank.*.upload_mbps"), (std::vector<std::string>{"network.rank.2.upload_mbps"}));
  EXPECT_TRUE(derived.get_bool("bench.verbose"));
  EXPECT_EQ(derived.get_int("seed"), 7);  // the rest is the base's
  EXPECT_EQ(derived.get_string("bench.label"), "x");
  EXPECT_EQ(base.get_string("network.scenario"), "datacenter");  // the base is unchanged
  // Equal to the same values read from text.
  EXPECT_EQ(derived, Config::from_string(derived.to_toml(), test_schema()));

  const std::vector<ConfigSetting> out_of_range{{"bench.iterations", std::int64_t{0}}};
  EXPECT_THROW(base.with(out_of_range), ConfigError);
  const std::vector<ConfigSetting> not_a_choice{{"network.scenario", "dialup"}};
  EXPECT_THROW(base.with(not_a_choice), ConfigError);
  const std::vector<ConfigSetting> wrong_type{{"bench.iterations", "ten"}};
  EXPECT_THROW(base.with(wrong_type), Error);
  const std::vector<ConfigSetting> unknown{{"bench.iteration", std::int64_t{3}}};
  EXPECT_THROW(base.with(unknown), Error);
}

TEST(Config, ReadsTablesDottedKeysAndTopLevelKeys) {
  const Config config = Config::from_string(R"(
seed = 7
bench.verbose = true
[network]
scenario = "consumer"
latency_ms = 30.5
)",
                                            test_schema());
  EXPECT_EQ(config.get_int("seed"), 7);
  EXPECT_TRUE(config.get_bool("bench.verbose"));
  EXPECT_EQ(config.get_string("network.scenario"), "consumer");
  EXPECT_DOUBLE_EQ(config.get_double("network.latency_ms"), 30.5);
  EXPECT_EQ(config.get_int("bench.iterations"), 10);  // not in the file: default
}

TEST(Config, IntegerForFloatKeyIsConverted) {
  const Config config = Config::from_string("network.latency_ms = 30", test_schema());
  EXPECT_DOUBLE_EQ(config.get_double("network.latency_ms"), 30.0);
}

TEST(Config, OverridesBeatTheFileAndLaterOverridesBeatEarlierOnes) {
  const std::string toml = "[bench]\niterations = 20\n";
  EXPECT_EQ(Config::from_string(toml, test_schema()).get_int("bench.iterations"), 20);
  const Overrides one = {"bench.iterations=30"};
  EXPECT_EQ(Config::from_string(toml, test_schema(), one).get_int("bench.iterations"), 30);
  const Overrides two = {"bench.iterations=30", "bench.iterations=40"};
  EXPECT_EQ(Config::from_string(toml, test_schema(), two).get_int("bench.iterations"), 40);
}

TEST(Config, OverrideValuesAreTomlOrPlainStrings) {
  const Overrides overrides = {"network.scenario=consumer", "bench.verbose=true",
                               "network.latency_ms=2.5", "bench.label=\"quoted text\"",
                               " seed = 9 "};
  const Config config = Config::defaults(test_schema(), overrides);
  EXPECT_EQ(config.get_string("network.scenario"), "consumer");
  EXPECT_TRUE(config.get_bool("bench.verbose"));
  EXPECT_DOUBLE_EQ(config.get_double("network.latency_ms"), 2.5);
  EXPECT_EQ(config.get_string("bench.label"), "quoted text");
  EXPECT_EQ(config.get_int("seed"), 9);
}

TEST(Config, OverrideValueWithSmuggledKeyIsTakenAsText) {
  const Overrides overrides = {"bench.label=1\nseed = 5"};
  const Config config = Config::defaults(test_schema(), overrides);
  EXPECT_EQ(config.get_string("bench.label"), "1\nseed = 5");
  EXPECT_EQ(config.get_int("seed"), 42);
}

TEST(Config, OverrideRepairsAnInvalidFileValue) {
  const Overrides overrides = {"bench.iterations=5"};
  const Config config =
      Config::from_string("bench.iterations = \"ten\"", test_schema(), overrides);
  EXPECT_EQ(config.get_int("bench.iterations"), 5);
}

TEST(Config, FromFileReadsTheFileAndNamesItInErrors) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("lowcomm_config_test_" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(path);
    out << "[bench]\niterations = 12\n";
  }
  EXPECT_EQ(Config::from_file(path, test_schema()).get_int("bench.iterations"), 12);
  {
    std::ofstream out(path);
    out << "[bench]\niteratons = 12\n";
  }
  try {
    Config::from_file(path, test_schema());
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), StartsWith(path.string() + ": unknown key 'bench.iteratons'"));
  }
  std::filesystem::remove(path);
}

// ---- unknown keys -----------------------------------------------------------------------------

TEST(ConfigErrors, UnknownKeySuggestsTheNearestKey) {
  EXPECT_EQ(load_error("[network]\nscenaro = \"consumer\"\n"),
            "config.toml: unknown key 'network.scenaro' (did you mean 'network.scenario'?)");
}

TEST(ConfigErrors, UnknownTableSuggestsTheNearestTable) {
  EXPECT_EQ(load_error("[netwrk]\nscenario = \"consumer\"\n"),
            "config.toml: unknown table 'netwrk' (did you mean 'network'?)");
}

TEST(ConfigErrors, KeyInTheWrongTableSuggestsWhereItBelongs) {
  EXPECT_THAT(load_error("scenario = \"consumer\"\n"),
              HasSubstr("unknown key 'scenario' (did you mean 'network.scenario'?)"));
}

TEST(ConfigErrors, UnknownWildcardInstanceSuggestsTheSameInstance) {
  const Overrides overrides = {"network.rank.3.upload_mpbs=5"};
  EXPECT_EQ(load_error("", overrides),
            "--set: unknown key 'network.rank.3.upload_mpbs' "
            "(did you mean 'network.rank.3.upload_mbps'?)");
}

TEST(ConfigErrors, UnrelatedUnknownKeyListsWhatIsThere) {
  const std::string message = load_error("completely_unrelated_thing = 1\n");
  EXPECT_THAT(message, HasSubstr("unknown key 'completely_unrelated_thing'"));
  EXPECT_THAT(message, Not(HasSubstr("did you mean")));
  EXPECT_THAT(message, HasSubstr("(the top level has: bench, network, seed)"));
  EXPECT_THAT(load_error("[network]\nbandwidth = 1\n"),
              HasSubstr("unknown key 'network.bandwidth' ([network] has: latency_ms, rank, scenario)"));
}

TEST(ConfigErrors, QuotedDottedKeyIsNotMistakenForAPath) {
  EXPECT_THAT(load_error("\"network.scenario\" = \"consumer\"\n"),
              HasSubstr("unknown key '\"network.scenario\"'"));
}

TEST(ConfigErrors, ValueGivenForATable) {
  EXPECT_THAT(load_error("network = 5\n"),
              HasSubstr("config.toml: 'network' is a table, not a value"));
}

// ---- types ------------------------------------------------------------------------------------

TEST(ConfigErrors, WrongTypeNamesKeyValueAndExpectedType) {
  EXPECT_EQ(load_error("[bench]\niterations = \"ten\"\n"),
            "config.toml: 'bench.iterations' must be an integer, got \"ten\"");
  EXPECT_EQ(load_error("bench.verbose = \"yes\"\n"),
            "config.toml: 'bench.verbose' must be true or false, got \"yes\"");
  EXPECT_EQ(load_error("network.latency_ms = \"fast\"\n"),
            "config.toml: 'network.latency_ms' must be a number, got \"fast\"");
  EXPECT_EQ(load_error("network.scenario = 3\n"),
            "config.toml: 'network.scenario' must be a string, got 3");
}

TEST(ConfigErrors, FloatForIntegerKeyIsAnErrorThatSaysHowToWriteIt) {
  EXPECT_EQ(load_error("bench.iterations = 10.0\n"),
            "config.toml: 'bench.iterations' must be an integer, got 10.0 "
            "(write it without a decimal point: 10)");
  const std::string fractional = load_error("bench.iterations = 2.5\n");
  EXPECT_THAT(fractional, HasSubstr("'bench.iterations' must be an integer, got 2.5"));
  EXPECT_THAT(fractional, Not(HasSubstr("decimal point")));
}

TEST(ConfigErrors, ArraysAndInlineTablesAreTypeErrors) {
  EXPECT_THAT(load_error("bench.iterations = [1, 2]\n"),
              HasSubstr("'bench.iterations' must be an integer, got an array"));
  EXPECT_THAT(load_error("network.scenario = { name = \"consumer\" }\n"),
              HasSubstr("'network.scenario' must be a string, got a table"));
  EXPECT_THAT(load_error("[network.scenario]\nname = \"consumer\"\n"),
              HasSubstr("'network.scenario' must be a string, got a table"));
  const Overrides overrides = {"bench.iterations=[1, 2]"};
  EXPECT_THAT(load_error("", overrides),
              HasSubstr("--set: 'bench.iterations' must be an integer, got an array"));
}

TEST(ConfigErrors, NumberForStringKeyOnCommandLineSaysHowToQuoteIt) {
  const Overrides overrides = {"bench.label=42"};
  EXPECT_EQ(load_error("", overrides),
            "--set: 'bench.label' must be a string, got 42 "
            "(to pass it as text, quote it: --set bench.label='\"42\"')");
}

// compressor.merge_groups = 16 (docs/network-model.md: "n"): a key whose values include a count
// takes an integer as its text, from a file and from --set; other string keys still refuse one.
TEST(ConfigErrors, AnIntegerForACountKeyIsItsText) {
  ConfigSchema schema = test_schema();
  schema.add({.path = "comm.groups", .type = ValueType::String, .default_value = std::string("none"),
              .description = "none, all or n", .integers_as_text = true});
  EXPECT_EQ(Config::from_string("comm.groups = 16\n", schema).get_string("comm.groups"), "16");
  EXPECT_EQ(Config::from_string("", schema, Overrides{"comm.groups=8"}).get_string("comm.groups"), "8");
  EXPECT_THAT(load_error("comm.groups = 1.5\n", {}, schema), HasSubstr("'comm.groups' must be a string, got 1.5"));
  EXPECT_THAT(load_error("network.scenario = 3\n", {}, schema), HasSubstr("'network.scenario' must be a string"));
}

// ---- bounds and choices -----------------------------------------------------------------------

TEST(ConfigErrors, OutOfRangeNamesValueAndInterval) {
  EXPECT_EQ(load_error("bench.iterations = 0\n"),
            "config.toml: 'bench.iterations' must be in [1, 1000], got 0");
  EXPECT_EQ(load_error("bench.iterations = 1001\n"),
            "config.toml: 'bench.iterations' must be in [1, 1000], got 1001");
  EXPECT_EQ(load_error("network.latency_ms = -0.5\n"),
            "config.toml: 'network.latency_ms' must be >= 0, got -0.5");
  EXPECT_THAT(load_error("network.latency_ms = nan\n"), HasSubstr("must be >= 0, got nan"));
}

TEST(ConfigErrors, BoundsAreInclusive) {
  const Config config = Config::from_string("bench.iterations = 1000\nnetwork.latency_ms = 0\n",
                                            test_schema());
  EXPECT_EQ(config.get_int("bench.iterations"), 1000);
}

TEST(ConfigErrors, NotAChoiceListsTheChoices) {
  EXPECT_EQ(load_error("network.scenario = \"cosumer\"\n"),
            "config.toml: 'network.scenario' must be one of \"consumer\", \"datacenter\", "
            "\"worldwide\"; got \"cosumer\" (did you mean \"consumer\"?)");
}

// ---- required keys, malformed input -----------------------------------------------------------

TEST(ConfigErrors, MissingRequiredKey) {
  ConfigSchema schema = test_schema();
  schema.add({.path = "run.name", .type = ValueType::String, .description = "name of the run"});
  EXPECT_EQ(load_error("", {}, schema),
            "config.toml: missing required key 'run.name' (name of the run): set it in the "
            "config file or with --set run.name=<value>");
  const Overrides overrides = {"run.name=baseline"};
  EXPECT_EQ(Config::defaults(schema, overrides).get_string("run.name"), "baseline");
}

TEST(Config, OptionalKeyWithoutDefaultMayBeLeftUnset) {
  ConfigSchema schema = test_schema();
  schema.add({.path = "network.upload_mbps", .type = ValueType::Float, .min = 0.0,
              .optional = true});
  const Config unset = Config::defaults(schema);
  EXPECT_FALSE(unset.has("network.upload_mbps"));
  EXPECT_THROW(unset.get_double("network.upload_mbps"), Error);
  EXPECT_THAT(unset.to_toml(), Not(HasSubstr("upload_mbps")));
  const Overrides overrides = {"network.upload_mbps=10"};
  const Config set = Config::defaults(schema, overrides);
  EXPECT_TRUE(set.has("network.upload_mbps"));
  EXPECT_DOUBLE_EQ(set.get_double("network.upload_mbps"), 10.0);
  const Overrides negative = {"network.upload_mbps=-1"};
  EXPECT_THAT(load_error("", negative, schema), HasSubstr("must be >= 0, got -1.0"));
}

TEST(ConfigErrors, MalformedTomlGivesLineAndColumn) {
  const std::string message = load_error("seed = 1\nbench.iterations = = 2\n");
  EXPECT_THAT(message, StartsWith("config.toml:2:"));
  EXPECT_THAT(message, HasSubstr("malformed TOML"));
  // Keys the unreadable file would have set must not be reported missing.
  ConfigSchema schema = test_schema();
  schema.add({.path = "run.name", .type = ValueType::String});
  EXPECT_THAT(load_error("[bench\n", {}, schema), Not(HasSubstr("missing required key")));
}

TEST(ConfigErrors, SetWithoutEqualsOrKeyShowsTheExpectedForm) {
  const Overrides no_equals = {"bench.iterations"};
  EXPECT_EQ(load_error("", no_equals),
            "--set: 'bench.iterations' is not of the form --set section.key=value");
  const Overrides no_key = {"=5"};
  EXPECT_THAT(load_error("", no_key), HasSubstr("is not of the form --set section.key=value"));
  const Overrides bad_key = {"bench..iterations=5"};
  EXPECT_THAT(load_error("", bad_key), HasSubstr("--set section.key=value"));
}

TEST(ConfigErrors, MissingFileNamesThePath) {
  const std::filesystem::path missing = "/nonexistent/lowcomm/experiment.toml";
  try {
    Config::from_file(missing, test_schema());
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr(missing.string()));
    EXPECT_THAT(error.what(), HasSubstr("not found"));
  }
}

TEST(ConfigErrors, AllProblemsAreReportedOnePerLineWithTheirSource) {
  const Overrides overrides = {"network.scenario=cosumer", "nonsense"};
  const std::string message = load_error(R"(
[network]
scenaro = "consumer"
latency_ms = -1
[bench]
iterations = "ten"
)",
                                         overrides);
  const auto lines = lines_of(message);
  ASSERT_EQ(lines.size(), 5u) << message;
  EXPECT_THAT(message, HasSubstr("config.toml: unknown key 'network.scenaro'"));
  EXPECT_THAT(message, HasSubstr("config.toml: 'network.latency_ms' must be >= 0"));
  EXPECT_THAT(message, HasSubstr("config.toml: 'bench.iterations' must be an integer"));
  EXPECT_THAT(message, HasSubstr("--set: 'network.scenario' must be one of"));
  EXPECT_THAT(message, HasSubstr("--set: 'nonsense' is not of the form"));
}

// ---- wildcard keys ----------------------------------------------------------------------------

TEST(ConfigWildcards, InstancesAreSetSortedNumericallyAndReadable) {
  const Overrides overrides = {"network.rank.10.upload_mbps=1", "network.rank.2.upload_mbps=2"};
  const Config config = Config::from_string("[network.rank.3]\nupload_mbps = 3\n", test_schema(),
                                            overrides);
  EXPECT_EQ(config.instances("network.rank.*.upload_mbps"),
            (std::vector<std::string>{"network.rank.2.upload_mbps", "network.rank.3.upload_mbps",
                                      "network.rank.10.upload_mbps"}));
  EXPECT_DOUBLE_EQ(config.get_double("network.rank.10.upload_mbps"), 1.0);
  EXPECT_DOUBLE_EQ(config.get_double("network.rank.3.upload_mbps"), 3.0);
  EXPECT_FALSE(config.has("network.rank.4.upload_mbps"));
  EXPECT_THROW(config.get_double("network.rank.4.upload_mbps"), Error);
}

TEST(ConfigWildcards, DefaultAppliesToEveryUnsetInstance) {
  const Overrides overrides = {"network.rank.1.download_mbps=10"};
  const Config config = Config::defaults(test_schema(), overrides);
  EXPECT_TRUE(config.has("network.rank.7.download_mbps"));
  EXPECT_DOUBLE_EQ(config.get_double("network.rank.7.download_mbps"), 100.0);
  EXPECT_DOUBLE_EQ(config.get_double("network.rank.1.download_mbps"), 10.0);
  EXPECT_EQ(config.instances("network.rank.*.download_mbps"),
            std::vector<std::string>{"network.rank.1.download_mbps"});
}

TEST(ConfigWildcards, InstanceValuesAreValidated) {
  const Overrides overrides = {"network.rank.0.upload_mbps=-5"};
  EXPECT_EQ(load_error("", overrides),
            "--set: 'network.rank.0.upload_mbps' must be >= 0, got -5.0");
}

TEST(ConfigSchema, FindMatchesWildcardsAndPrefersTheMostSpecificKey) {
  ConfigSchema schema = test_schema();
  schema.add({.path = "network.rank.0.upload_mbps", .type = ValueType::Float});
  EXPECT_EQ(schema.find("network.rank.5.upload_mbps")->path, "network.rank.*.upload_mbps");
  EXPECT_EQ(schema.find("network.rank.0.upload_mbps")->path, "network.rank.0.upload_mbps");
  EXPECT_EQ(schema.find("network.rank.a b.upload_mbps"), nullptr);
  EXPECT_EQ(schema.find("network.rank.5"), nullptr);
  EXPECT_EQ(schema.find("network.scenario")->type, ValueType::String);
}

TEST(ConfigSchema, KeysAreSortedByPath) {
  const ConfigSchema schema = test_schema();
  const auto keys = schema.keys();
  ASSERT_EQ(keys.size(), 9u);
  for (std::size_t i = 1; i < keys.size(); ++i) EXPECT_LT(keys[i - 1]->path, keys[i]->path);
}

TEST(ConfigSchema, RejectsDuplicatesConflictsAndInvalidDefaults) {
  ConfigSchema schema = test_schema();
  EXPECT_THROW(schema.integer("seed", 1, "again"), Error);
  EXPECT_THROW(schema.integer("seed.offset", 1, "seed is a value"), Error);
  EXPECT_THROW(schema.integer("network", 1, "network is a table"), Error);
  EXPECT_THROW(schema.integer("count", 0, "below its own minimum", 1), Error);
  EXPECT_THROW(schema.string("mode", "fast", "not a choice", {"slow", "safe"}), Error);
  EXPECT_THROW(schema.add({.path = "flag", .type = ValueType::Boolean, .default_value = 1.5}),
               Error);
  EXPECT_THROW(schema.add({.path = "bad..path", .type = ValueType::Boolean}), Error);
  EXPECT_NO_THROW(schema.integer("count", 1, "at its minimum", 1));
}

// ---- aliases ----------------------------------------------------------------------------------

ConfigSchema aliased_schema() {
  ConfigSchema schema = test_schema();
  schema.add({.path = "strategy.demo.compression_topk", .type = ValueType::Integer,
              .description = "DeMo's name for compressor.dct_topk.topk", .alias_of = "compressor.dct_topk.topk"});
  schema.integer("compressor.dct_topk.topk", 32, "coefficients per block", 1);
  return schema;
}

TEST(ConfigAliases, EitherNameSetsTheOneKeyWhichIsWrittenUnderItsOwnName) {
  const ConfigSchema schema = aliased_schema();
  const Config by_alias = Config::defaults(schema, Overrides{"strategy.demo.compression_topk=8"});
  EXPECT_EQ(by_alias.get_int("compressor.dct_topk.topk"), 8);
  EXPECT_EQ(by_alias.get_int("strategy.demo.compression_topk"), 8);
  EXPECT_TRUE(by_alias.has("strategy.demo.compression_topk"));
  const Config by_name = Config::defaults(schema, Overrides{"compressor.dct_topk.topk=8"});
  EXPECT_EQ(by_name, by_alias);
  EXPECT_EQ(by_name.to_toml(), by_alias.to_toml());
  EXPECT_THAT(by_alias.to_toml(), Not(HasSubstr("compression_topk")));
  EXPECT_EQ(Config::defaults(schema).get_int("strategy.demo.compression_topk"), 32);  // the key's default
  // Through the alias, the key's own bounds hold.
  EXPECT_THAT([&] { Config::defaults(schema, Overrides{"strategy.demo.compression_topk=0"}); },
              testing::ThrowsMessage<ConfigError>(HasSubstr("compression_topk")));
  EXPECT_EQ(by_alias.with(std::vector<ConfigSetting>{{"strategy.demo.compression_topk", std::int64_t{4}}})
                .get_int("compressor.dct_topk.topk"),
            4);
}

TEST(ConfigAliases, BothNamesInOneSourceAreRefusedALaterSourceWins) {
  const ConfigSchema schema = aliased_schema();
  EXPECT_THAT([&] {
    Config::defaults(schema, Overrides{"strategy.demo.compression_topk=8", "compressor.dct_topk.topk=8"});
  }, testing::ThrowsMessage<ConfigError>(HasSubstr("name one setting: set only one of them")));
  EXPECT_THAT([&] {
    Config::from_string("[compressor.dct_topk]\ntopk = 4\n[strategy.demo]\ncompression_topk = 4\n", schema);
  }, testing::ThrowsMessage<ConfigError>(HasSubstr("name one setting")));
  // The file sets one name, the command line the other: the command line wins.
  const Config config =
      Config::from_string("[compressor.dct_topk]\ntopk = 4\n", schema, Overrides{"strategy.demo.compression_topk=9"});
  EXPECT_EQ(config.get_int("compressor.dct_topk.topk"), 9);
}

TEST(ConfigAliases, AnAliasHasNoValueOfItsOwnAndMustNameAKey) {
  ConfigSchema schema = test_schema();
  EXPECT_THROW(schema.add({.path = "a.b", .type = ValueType::Integer, .default_value = std::int64_t{1},
                           .alias_of = "seed"}),
               Error);
  schema.add({.path = "a.c", .type = ValueType::Integer, .alias_of = "no.such_key"});
  EXPECT_THROW(Config::defaults(schema, Overrides{"a.c=1"}), Error);
}

// ---- getters ----------------------------------------------------------------------------------

TEST(ConfigGetters, UnknownPathOrWrongTypeThrowsErrorNamingThePath) {
  const Config config = Config::defaults(test_schema());
  try {
    config.get_int("bench.iteration");
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("'bench.iteration'"));
  }
  try {
    config.get_string("bench.iterations");
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("'bench.iterations'"));
    EXPECT_THAT(error.what(), HasSubstr("an integer"));
  }
  EXPECT_THROW(config.get_double("bench.iterations"), Error);  // Integer key
  EXPECT_THROW(config.get_bool("network.scenario"), Error);
  EXPECT_FALSE(config.has("bench.iteration"));
  EXPECT_TRUE(config.has("bench.iterations"));
  EXPECT_THROW(config.instances("network.rank.*.upload"), Error);
}

// ---- resolved text and hash -------------------------------------------------------------------

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  return hash;
}

TEST(ConfigText, IsOrderedTomlWithEveryValue) {
  const Overrides overrides = {"network.rank.10.upload_mbps=1", "network.rank.9.upload_mbps=2"};
  const Config config = Config::defaults(test_schema(), overrides);
  EXPECT_EQ(config.to_toml(),
            "seed = 42\n"
            "\n[bench]\n"
            "iterations = 10\n"
            "label = \"\"\n"
            "scale = 1.0\n"
            "verbose = false\n"
            "\n[network]\n"
            "latency_ms = 1.0\n"
            "scenario = \"datacenter\"\n"
            "\n[network.rank.9]\n"
            "upload_mbps = 2.0\n"
            "\n[network.rank.10]\n"
            "upload_mbps = 1.0\n");
}

TEST(ConfigText, RoundTripsToAnEqualConfig) {
  const Overrides overrides = {
      "bench.label=\"tab\\t quote\\\" backslash\\\\ newline\\n bell\\u0007 π\"",
      "bench.scale=0.1", "network.latency_ms=100", "network.rank.3.upload_mbps=1e300",
      "network.rank.4.upload_mbps=5e-324", "seed=-9223372036854775808"};
  const Config config = Config::defaults(test_schema(), overrides);
  const Config reread = Config::from_string(config.to_toml(), test_schema());
  EXPECT_EQ(reread.to_toml(), config.to_toml());
  EXPECT_EQ(reread.hash(), config.hash());
  EXPECT_TRUE(reread == config);
  EXPECT_EQ(reread.get_string("bench.label"),
            "tab\t quote\" backslash\\ newline\n bell\a π");
  EXPECT_EQ(reread.get_double("bench.scale"), 0.1);
  EXPECT_EQ(reread.get_double("network.rank.4.upload_mbps"),
            std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(reread.get_int("seed"), std::numeric_limits<std::int64_t>::min());
}

TEST(ConfigText, SpecialFloatsRoundTrip) {
  const Overrides overrides = {"bench.scale=-inf"};
  const Config config = Config::defaults(test_schema(), overrides);
  EXPECT_THAT(config.to_toml(), HasSubstr("scale = -inf\n"));
  EXPECT_EQ(Config::from_string(config.to_toml(), test_schema()).hash(), config.hash());
  const Overrides nan = {"bench.scale=nan"};
  const Config with_nan = Config::defaults(test_schema(), nan);
  EXPECT_EQ(Config::from_string(with_nan.to_toml(), test_schema()).to_toml(), with_nan.to_toml());
}

TEST(ConfigHash, IsFnv1aOfTheTextAndFollowsTheValues) {
  EXPECT_EQ(Config::defaults(ConfigSchema{}).hash(), 0xcbf29ce484222325ULL);  // empty text
  const Config base = Config::defaults(test_schema());
  EXPECT_EQ(base.hash(), fnv1a(base.to_toml()));
  EXPECT_EQ(Config::defaults(test_schema()).hash(), base.hash());
  const Overrides changed = {"bench.iterations=11"};
  const Config other = Config::defaults(test_schema(), changed);
  EXPECT_NE(other.hash(), base.hash());
  EXPECT_FALSE(other == base);
  const Overrides same_value = {"bench.iterations=10"};
  EXPECT_EQ(Config::defaults(test_schema(), same_value).hash(), base.hash());
}

// What a checkpoint records: a key added to the schema later, at its default, changes nothing; a
// value off its default, or the new key set to another value, changes it.
TEST(ConfigHash, OfChangesIgnoresKeysAtTheirDefaults) {
  const Overrides run = {"bench.iterations=11", "network.rank.2.upload_mbps=5"};
  const Config before = Config::defaults(test_schema(), run);
  ConfigSchema grown = test_schema();
  grown.string("comm.transport", "mpi", "added later", {"mpi", "nccl"});
  const Config after = Config::defaults(grown, run);
  EXPECT_NE(after.hash(), before.hash());
  EXPECT_EQ(after.hash_of_changes(), before.hash_of_changes());
  // Only the changed values count: the text of the two of them (the optional key has no default).
  EXPECT_EQ(before.hash_of_changes(),
            fnv1a("[bench]\niterations = 11\n\n[network.rank.2]\nupload_mbps = 5.0\n"));
  const Overrides transport = {"bench.iterations=11", "network.rank.2.upload_mbps=5", "comm.transport=nccl"};
  EXPECT_NE(Config::defaults(grown, transport).hash_of_changes(), before.hash_of_changes());
  EXPECT_NE(Config::defaults(test_schema(), Overrides{"bench.iterations=12"}).hash_of_changes(),
            before.hash_of_changes());
  EXPECT_EQ(Config::defaults(test_schema(), Overrides{"seed=42"}).hash_of_changes(),
            Config::defaults(test_schema()).hash_of_changes());
}

}  // namespace
}  // namespace lowcomm

// The registry: names, parameters as configuration keys, errors that say what to change, and
// creation with error feedback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using testing::HasSubstr;

class Dummy final : public Compressor {
 public:
  explicit Dummy(double strength) : strength(strength) {}
  Aggregation aggregation() const override { return Aggregation::Summable; }
  bool supports(Granularity g) const override { return g == Granularity::PerTensor; }
  Message encode(const UnitContext&, std::span<const float> g, UnitScratch&) override {
    return Message::sum({g.begin(), g.end()});
  }
  std::optional<Message> decode(const UnitContext&, int, const Received&, UnitScratch&, std::span<float>) override {
    return std::nullopt;
  }
  Transmitted transmitted(const UnitContext&, std::span<const float>, const UnitScratch&, std::span<float>) const override {
    return Transmitted::aggregate();
  }
  std::optional<std::uint64_t> wire_bytes(const UnitContext&, int) const override { return std::nullopt; }
  double strength;
};

CompressorInfo dummy_info(std::string name) {
  return {.name = std::move(name),
          .description = "for tests",
          .parameters = {{.path = "strength", .type = ValueType::Float, .default_value = 0.5,
                          .description = "how hard", .min = 0.0, .max = 1.0}},
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) {
            return std::make_unique<Dummy>(p.get_double("strength"));
          }};
}

std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

TEST(CompressorRegistry, ParametersBecomeConfigurationKeys) {
  CompressorRegistry registry;
  registry.add(dummy_info("dummy"));
  ConfigSchema schema;
  registry.add_config_keys(schema);
  ASSERT_NE(schema.find("compressor.dummy.strength"), nullptr);
  ASSERT_NE(schema.find("compressor.dummy.error_feedback"), nullptr);
  EXPECT_EQ(std::get<bool>(*schema.find("compressor.dummy.error_feedback")->default_value), true);

  const Config config = Config::defaults(schema, std::vector<std::string>{"compressor.name=dummy",
                                                                           "compressor.dummy.strength=0.25"});
  std::unique_ptr<Compressor> made = registry.create(config);
  const auto* wrapped = dynamic_cast<const ErrorFeedback*>(made.get());
  ASSERT_NE(wrapped, nullptr) << "error_feedback defaults to true for this compressor";
  EXPECT_EQ(dynamic_cast<const Dummy&>(wrapped->inner()).strength, 0.25);

  const Config plain = Config::defaults(schema, std::vector<std::string>{
                                                    "compressor.name=dummy", "compressor.dummy.error_feedback=false"});
  EXPECT_NE(dynamic_cast<const Dummy*>(registry.create(plain).get()), nullptr);
  const Config decayed_without_feedback = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=dummy", "compressor.dummy.error_feedback=false",
                                       "compressor.dummy.error_feedback_decay=0.95"});
  EXPECT_THAT(config_error([&] { registry.create(decayed_without_feedback); }),
              HasSubstr("set compressor.dummy.error_feedback = true, or leave the decay at 1"));
}

TEST(CompressorRegistry, ErrorsSayWhatToChange) {
  CompressorRegistry registry;
  registry.add(dummy_info("dummy"));
  EXPECT_THAT(config_error([&] { registry.find("dumy"); }), HasSubstr("registered are dummy"));
  EXPECT_THROW(registry.add(dummy_info("dummy")), Error);
  EXPECT_THROW(registry.add(dummy_info("Bad Name")), Error);
  ConfigSchema schema;
  registry.add_config_keys(schema);
  EXPECT_THAT(config_error([&] {
                Config::defaults(schema, std::vector<std::string>{"compressor.dummy.strength=2"});
              }),
              HasSubstr("compressor.dummy.strength"));
  const Config global = Config::defaults(schema, std::vector<std::string>{"compressor.name=dummy",
                                                                           "compressor.granularity=global"});
  EXPECT_THAT(config_error([&] { registry.create(global); }), HasSubstr("does not support"));
}

TEST(Registry, NamesWhereEachEntryCameFrom) {
  CompressorRegistry registry;
  registry.add(dummy_info("dummy"));
  {
    const RegistrationSource loading("/plugins/libfirst.so");
    registry.add(dummy_info("mine"));
  }
  const RegistrationSource loading("/plugins/libsecond.so");
  try {
    registry.add(dummy_info("mine"));
    ADD_FAILURE() << "a name registered twice was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("compressor named 'mine' is already registered (by /plugins/libfirst.so); "
                                    "/plugins/libsecond.so registers it again"));
  }
  EXPECT_THAT(config_error([&] { registry.find("minr"); }),
              HasSubstr("registered are dummy, mine (from /plugins/libfirst.so)"));
  // A static registration object defers its error to the loader instead of terminating.
  const std::size_t before = registrations_made();
  register_statically(registry, dummy_info("mine"));
  register_statically(registry, dummy_info("other"));
  EXPECT_EQ(registrations_made(), before + 1);
  const std::vector<std::string> errors = take_registration_errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("'mine' is already registered"));
  EXPECT_TRUE(take_registration_errors().empty());
}

TEST(OptimizerRegistry, APluggedInOptimizerIsMadeByName) {
  OptimizerRegistry& registry = OptimizerRegistry::global();
  const RegistrationSource loading("/plugins/libopt.so");
  struct Halve final : Optimizer {
    std::string_view name() const override { return "halve"; }
    void step(std::span<const std::span<float>> params, std::span<const std::span<const float>>, double) override {
      for (std::span<float> p : params) for (float& x : p) x *= 0.5f;
    }
    std::int64_t steps() const override { return 0; }
    void save_state(StateDict&, std::string_view) const override {}
    void load_state(const StateDict&, std::string_view) override {}
  };
  RegisterOptimizer registration{
      {.name = "halve_test", .description = "for tests", .parameters = {},
       .create = [](const OptimizerParameters&, const OptimizerSetup&) -> std::unique_ptr<Optimizer> {
         return std::make_unique<Halve>();
       }}};
  EXPECT_TRUE(take_registration_errors().empty());
  ConfigSchema schema;
  add_optimizer_keys(schema);
  const Config config = Config::defaults(schema, std::vector<std::string>{"optimizer.name=halve_test"});
  std::vector<float> x{2.0f, 4.0f};
  const std::vector<std::span<float>> params{x};
  make_optimizer(config)->step(params, {}, 1.0);
  EXPECT_EQ(x, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(registry.find("halve_test").description, "for tests");
}

TEST(CompressorRegistry, GlobalRegistryHasTheBuiltins) {
  const CompressorRegistry& registry = CompressorRegistry::global();
  for (const char* name : {"none", "randomk"}) EXPECT_EQ(registry.find(name).name, name);
  std::vector<std::string> names;
  for (const CompressorInfo* info : registry.all()) names.push_back(info->name);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(StateDict, StoresFloatsAndIntegersByKey) {
  StateDict state;
  const std::vector<float> values{1.0f, 2.5f};
  state.put("residual/3", values);
  state.put("step", std::int64_t{7});
  EXPECT_EQ(state.floats("residual/3"), values);
  EXPECT_EQ(state.integer("step"), 7);
  EXPECT_THROW(state.floats("step"), Error);
  EXPECT_THROW(state.integer("missing"), Error);
  EXPECT_EQ(state.keys(), (std::vector<std::string>{"residual/3", "step"}));
}

}  // namespace
}  // namespace lowcomm

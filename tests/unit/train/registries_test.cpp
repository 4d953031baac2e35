// The registries by kind (train/registries.hpp): what Lua's core.registry and
// core.check serve, and `drun help`'s text made from the same entries.
#include "train/registries.hpp"

#include <gtest/gtest.h>

#include "usage_error.hpp"

namespace drun::train {
namespace {

using testing::expect_usage_error;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Registries, EveryKindDescribesAndChecksItsEntries) {
  ASSERT_TRUE(registries().count("layers"));
  ASSERT_TRUE(registries().count("strategies"));
  for (const auto& [kind, k] : registries()) {
    SCOPED_TRACE(kind);
    const json entries = k.describe();
    ASSERT_FALSE(entries.empty());
    for (const json& e : entries) {
      EXPECT_FALSE(e["names"].empty());
      EXPECT_TRUE(e["options"].is_array());
    }
  }
  registry_kind("strategies").check("EASGD", {{"tau", 2}});
  expect_usage_error(
      [] {
        registry_kind("strategies").check("EASGD", {{"tau", 0}});
      },
      {"tau must be at least 1"});
  expect_usage_error(
      [] {
        registry_kind("layers").check("Dense", {{"unitz", 1}});
      },
      {"nn.Dense", "unknown option 'unitz'"});
  expect_usage_error([] { registry_kind("gadgets"); }, {"no registry 'gadgets'"});
}

TEST(Registries, HelpListsEveryNameAndDescribesOne) {
  const std::string all = registry_help("");
  EXPECT_TRUE(has(all, "layers: Dense")) << all;
  EXPECT_TRUE(has(all, "MaxPooling2D, MaxPool2D")) << all;
  EXPECT_TRUE(has(all, "strategies: AllReduce, MultiWorkerMirrored")) << all;
  const std::string dense = registry_help("Dense");
  EXPECT_TRUE(has(dense, "Dense (layer): ")) << dense;
  EXPECT_TRUE(has(dense, "positional: units, activation")) << dense;
  EXPECT_TRUE(has(dense, "units")) << dense;
  EXPECT_TRUE(has(dense, "integer, required")) << dense;
  EXPECT_TRUE(has(dense, "default \"linear\"")) << dense;
  const std::string ps = registry_help("ParameterServer");
  EXPECT_TRUE(has(ps, "--strategy ps_async, ps_sync")) << ps;
  EXPECT_TRUE(has(registry_help("strategies"), "Hogwild (strategy)"));
  expect_usage_error([] { registry_help("Dense3D"); }, {"nothing is called 'Dense3D'"});
}

TEST(Registries, OptimizersSchedulesLossesMetricsHooksAndFitAreServed) {
  const std::pair<const char*, const char*> bad[] = {
      {"optimizers", "SGD"},         {"schedules", "CosineDecay"}, {"losses", "MeanSquaredError"},
      {"metrics", "accuracy"},       {"hooks", "LoggingHook"},     {"fit", "fit"},
      {"callbacks", "EarlyStopping"}};
  for (const auto& entry : bad) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const char* kind = entry.first;
    const char* name = entry.second;
    SCOPED_TRACE(kind);
    expect_usage_error(
        [&] {
          registry_kind(kind).check(name, {{"no_such_option", 1}});
        },
        {"unknown option 'no_such_option'"});
  }
  registry_kind("optimizers").check("RMSprop", {{"rho", 0.8}});
  registry_kind("fit").check("fit", {{"epochs", 2}, {"hooks", "<table>"}});
  expect_usage_error(
      [] {
        registry_kind("optimizers").check("SGD", {{"momentum", 2}});
      },
      {"momentum must be in [0"});
  const std::string adam = registry_help("adam");
  EXPECT_TRUE(has(adam, "Adam, adam (optimizer)")) << adam;
  EXPECT_TRUE(has(adam, "beta_1")) << adam;
  const std::string mse = registry_help("mse");
  EXPECT_TRUE(has(mse, "(loss)")) << mse;
  EXPECT_TRUE(has(mse, "(metric)")) << mse;
}

}  // namespace
}  // namespace drun::train

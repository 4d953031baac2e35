// The strategy registry (distributed/strategy_list.hpp): every entry parses
// with its defaults, its presets are what Lua's --strategy names mean, and the
// averaging presets are those the linear scaling rule is for.
#include <gtest/gtest.h>

#include <set>

#include "distributed/strategy_spec.hpp"
#include "usage_error.hpp"

namespace drun::distributed {
namespace {

using testing::expect_usage_error;

TEST(StrategyRegistry, EveryEntryParsesWithItsDefaultsAndDocumentsItsOptions) {
  std::set<std::string> names, presets;
  for (const StrategyInfo* info : strategy_registry()) {
    SCOPED_TRACE(info->about.name());
    EXPECT_FALSE(info->about.doc.empty());
    for (const auto& n : info->about.names) EXPECT_TRUE(names.insert(n).second) << n;
    for (const OptionSpec& o : info->about.schema.options) EXPECT_FALSE(o.doc.empty()) << o.name;
    EXPECT_EQ(parse_strategy({{"name", info->about.name()}}).name, info->about.name());
    ASSERT_FALSE(info->presets.empty());
    for (const auto& p : info->presets) EXPECT_TRUE(presets.insert(p.name).second) << p.name;
  }
  EXPECT_EQ(names.size(), 13u);  // twelve strategies, AllReduce also MultiWorkerMirrored
  EXPECT_EQ(parse_strategy({{"name", "MultiWorkerMirrored"}}).name, "AllReduce");
}

TEST(StrategyRegistry, PresetsAndTheAveragingOnes) {
  std::set<std::string> averaging;
  for (const json& entry : describe_strategies())
    for (const json& p : entry["presets"])
      if (p["averaging"].get<bool>()) averaging.insert(p["name"].get<std::string>());
  EXPECT_EQ(averaging, (std::set<std::string>{"all_reduce", "ps_sync", "sync_sgd"}));
}

TEST(StrategyRegistry, OptionsOfTheWrongModeOrTypeAreRefused) {
  const auto spec = [](const std::string& name, json options) {
    parse_strategy({{"name", name}, {"options", options}});
  };
  expect_usage_error(
      [&] {
        spec("ParameterServer", {{"backup_workers", 1}});
      },
      {"strategy.ParameterServer", "backup_workers", "mode = 'sync'"});
  expect_usage_error(
      [&] {
        spec("AllReduce", {{"placement", "greedy"}});
      },
      {"unknown option 'placement'", "valid options: bucket_bytes"});
  expect_usage_error(
      [&] {
        spec("EASGD", {{"tau", "four"}});
      },
      {"strategy.EASGD", "'tau' has the wrong type"});
  expect_usage_error([&] { spec("Sparkle", json::object()); },
                     {"unknown strategy 'Sparkle'", "valid: AllReduce, MultiWorkerMirrored"});
}

}  // namespace
}  // namespace drun::distributed

// The hook registry (train/hook_list.hpp): what Lua's drun.hooks checks its
// constructors' options against and builds the C++ hooks from.
#include "train/hook_registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "registry_checks.hpp"
#include "train/compile_options.hpp"
#include "train/fit_config.hpp"
#include "train/run_fit.hpp"
#include "usage_error.hpp"

namespace drun::train {
namespace {

using testing::expect_usage_error;

TEST(HookRegistry, EntriesAreDocumentedAndNamedOnce) {
  std::set<std::string> seen;
  ASSERT_FALSE(hook_registry().empty());
  for (const HookInfo* info : hook_registry()) {
    SCOPED_TRACE(info->about.name());
    EXPECT_FALSE(info->about.doc.empty());
    for (const auto& n : info->about.names) EXPECT_TRUE(seen.insert(n).second) << n;
    testing::expect_schema_documented(info->about.schema);
  }
  const json described = describe_hooks();
  ASSERT_EQ(described.size(), hook_registry().size());
  std::set<std::string> builtin;
  for (const json& d : described)
    if (d["builtin"].get<bool>()) builtin.insert(d["names"][0].get<std::string>());
  EXPECT_EQ(builtin, (std::set<std::string>{"GlobalStepWaiterHook", "NanGuard"}));
}

TEST(HookRegistry, BuildsTheHooksCxxRunsAndChecksTheOthers) {
  EXPECT_EQ(make_hook("NanGuard", json::object())->name(), "NanGuard");
  EXPECT_EQ(make_hook("GlobalStepWaiterHook", {{"wait_until_step", 3}})->name(),
            "GlobalStepWaiterHook");
  EXPECT_EQ(make_hook("LoggingHook", {{"every_n_steps", 5}}), nullptr);
  expect_usage_error(
      [] {
        make_hook("LoggingHook", {{"every_n_step", 5}});
      },
      {"LoggingHook", "unknown option 'every_n_step'", "valid options: every_n_steps, tensors"});
  expect_usage_error(
      [] {
        make_hook("NanGuard", {{"layers", 1}});
      },
      {"NanGuard", "unknown option 'layers'"});
  expect_usage_error([] { make_hook("GlobalStepWaiterHook", json::object()); },
                     {"GlobalStepWaiterHook", "option 'wait_until_step' is required"});
  expect_usage_error(
      [] {
        make_hook("GlobalStepWaiterHook", {{"wait_until_step", -1}});
      },
      {"wait_until_step must be a number >= 0"});
  expect_usage_error(
      [] {
        make_hook("StopAtStepHook", {{"num_steps", "ten"}});
      },
      {"StopAtStepHook", "option 'num_steps' has the wrong type"});
  expect_usage_error([] { make_hook("EarlyStopping", json::object()); },
                     {"unknown hook 'EarlyStopping'", "valid: LoggingHook"});
}

}  // namespace
}  // namespace drun::train

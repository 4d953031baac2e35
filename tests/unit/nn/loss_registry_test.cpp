// The loss and metric registries (nn/loss_list.hpp, nn/metric_list.hpp): what
// Loss, Metric and Lua's drun.losses read from them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "nn/loss.hpp"
#include "nn/metrics.hpp"
#include "registry_checks.hpp"
#include "usage_error.hpp"

namespace drun::nn {
namespace {

using testing::expect_usage_error;

TEST(LossRegistry, EntriesAreDocumentedAndEveryNameBuildsItsClass) {
  testing::expect_registry_documented(loss_registry());
  for (const LossInfo* info : loss_registry()) {
    for (const char* common : {"from_logits", "reduction", "name"})
      EXPECT_NE(info->about.schema.find(common), nullptr) << info->about.name() << " " << common;
    for (const auto& name : info->about.names) {
      const Loss loss{json(name)};
      EXPECT_EQ(loss.class_name(), info->about.name()) << name;
      EXPECT_EQ(loss.sparse(), info->sparse) << name;
      EXPECT_EQ(Loss(loss.config()).config(), loss.config()) << name;
    }
  }
  EXPECT_EQ(Loss(json("mse")).class_name(), "MeanSquaredError");
}

TEST(LossRegistry, MistakesNameWhatIsWrong) {
  expect_usage_error([] { Loss(json("hinge")); },
                     {"unknown loss 'hinge'", "SparseCategoricalCrossentropy", "mse"});
  // The snake_case names are shorthands, not classes.
  expect_usage_error([] { Loss(json{{"class_name", "mse"}}); }, {"unknown loss 'mse'"});
  expect_usage_error(
      [] {
        Loss(json{{"class_name", "BinaryCrossentropy"}, {"config", {{"from_logit", true}}}});
      },
      {"BinaryCrossentropy", "unknown option 'from_logit'",
       "valid options: from_logits, label_smoothing, name, reduction"});
  expect_usage_error(
      [] {
        Loss(json{{"class_name", "CategoricalCrossentropy"}, {"config", {{"from_logits", 1}}}});
      },
      {"CategoricalCrossentropy", "option 'from_logits' has the wrong type"});
  expect_usage_error([] { Loss(json(3)); }, {"loss: expected a name"});
}

TEST(MetricRegistry, EntriesAreDocumentedAndAliasesGiveTheCanonicalName) {
  testing::expect_registry_documented(metric_registry());
  for (const MetricInfo* info : metric_registry()) {
    // A sum (no options) or a counted metric, never both.
    EXPECT_NE(static_cast<bool>(info->kind), static_cast<bool>(info->counted));
    EXPECT_TRUE(!info->kind || info->about.schema.options.empty()) << info->about.name();
    for (const auto& name : info->about.names)
      EXPECT_EQ(Metric(name, false).name(), info->about.name());
  }
  EXPECT_EQ(Metric("acc", false).name(), "accuracy");
  expect_usage_error([] { Metric("f1", false); },
                     {"unknown metric 'f1'", "valid: accuracy, acc, mse, mae"});
}

}  // namespace
}  // namespace drun::nn

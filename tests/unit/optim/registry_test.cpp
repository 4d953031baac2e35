// The optimizer and schedule registries (optim/optimizer_list.hpp,
// optim/schedule_list.hpp): what make_optimizer, make_schedule and Lua's
// drun.optim read from them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "optim/optimizer.hpp"
#include "registry_checks.hpp"
#include "usage_error.hpp"

namespace drun::optim {
namespace {

using testing::expect_usage_error;

// Besides what every registry's test checks: a constructor, and the Keras
// class (capitalised) named first.
template <class Entry>
void expect_documented(const std::vector<const Entry*>& registry) {
  testing::expect_registry_documented(registry);
  for (const Entry* info : registry) {
    EXPECT_TRUE(info->make) << info->about.name();
    EXPECT_TRUE(is_class_name(info->about.name())) << info->about.name();
  }
}

TEST(OptimizerRegistry, EntriesAreDocumentedAndNamedOnce) {
  expect_documented(optimizer_registry());
  for (const OptimizerInfo* info : optimizer_registry()) {
    if (info->about.name() == "LossScaleOptimizer") continue;
    for (const char* common : {"learning_rate", "decay", "weight_decay", "clipnorm", "clipvalue",
                               "global_clipnorm", "name"})
      EXPECT_NE(info->about.schema.find(common), nullptr) << info->about.name() << " " << common;
  }
}

TEST(OptimizerRegistry, EveryNameBuildsItsClassWithTheSchemasDefaults) {
  for (const OptimizerInfo* info : optimizer_registry()) {
    if (info->about.name() == "LossScaleOptimizer") continue;
    for (const auto& name : info->about.names) {
      SCOPED_TRACE(name);
      auto opt = make_optimizer(json(name));
      EXPECT_EQ(opt->class_name(), info->about.name());
      const json config = opt->config()["config"];
      // What config() writes of each option is the schema's default.
      for (const OptionSpec& o : info->about.schema.options) {
        if (config.contains(o.name) && o.name != "name") {
          EXPECT_EQ(config[o.name], o.fallback) << o.name;
        }
      }
    }
  }
  EXPECT_EQ(make_optimizer(json("rmsprop"))->class_name(), "RMSprop");
  EXPECT_EQ(make_optimizer(json{{"class_name", "RMSProp"}})->class_name(), "RMSprop");
}

TEST(OptimizerRegistry, MistakesNameWhatIsWrong) {
  expect_usage_error([] { make_optimizer(json("Nadam")); },
                     {"unknown optimizer class 'Nadam'",
                      "Adagrad, Adam, AdamW, RMSprop (or RMSProp), SGD", "LossScaleOptimizer"});
  // Keras' shorthands are names, not classes.
  expect_usage_error(
      [] {
        make_optimizer(json{{"class_name", "adam"}});
      },
      {"unknown optimizer class 'adam'"});
  expect_usage_error(
      [] {
        make_optimizer(json{{"class_name", "Adagrad"}, {"config", {{"epsilom", 1e-3}}}});
      },
      {"Adagrad", "unknown option 'epsilom'",
       "valid options: clipnorm, clipvalue, decay, epsilon, global_clipnorm, "
       "gradient_accumulation_steps, initial_accumulator_value, learning_rate, name, "
       "weight_decay"});
  expect_usage_error(
      [] {
        make_optimizer(json{{"class_name", "RMSprop"}, {"config", {{"centered", 1}}}});
      },
      {"RMSprop", "option 'centered' has the wrong type", "expected boolean"});
  expect_usage_error(
      [] {
        make_optimizer(json{{"class_name", "LossScaleOptimizer"}, {"config", json::object()}});
      },
      {"LossScaleOptimizer", "option 'inner_optimizer' is required"});
}

TEST(ScheduleRegistry, EntriesAreDocumentedAndBuildFromTheirRequiredOptions) {
  expect_documented(schedule_registry());
  for (const ScheduleInfo* info : schedule_registry()) {
    SCOPED_TRACE(info->about.name());
    EXPECT_NE(info->about.schema.find("name"), nullptr);
    // The smallest values that make sense, for the options a user must give.
    json config = json::object();
    for (const OptionSpec& o : info->about.schema.options)
      if (o.required)
        config[o.name] = o.name == "boundaries" ? json::array({10})
                         : o.name == "values"   ? json::array({0.1, 0.01})
                                                : json(1);
    const auto s = make_schedule({{"class_name", info->about.name()}, {"config", config}});
    EXPECT_EQ(s->config()["class_name"], info->about.name());
  }
}

TEST(ScheduleRegistry, MistakesNameWhatIsWrong) {
  expect_usage_error(
      [] {
        make_schedule({{"class_name", "StepDecay"}});
      },
      {"unknown learning-rate schedule class 'StepDecay'",
       "CosineDecay, ExponentialDecay, LinearWarmup, PiecewiseConstantDecay"});
  expect_usage_error(
      [] {
        make_schedule({{"class_name", "CosineDecay"},
                       {"config", {{"initial_learning_rate", 0.1}, {"decay_step", 10}}}});
      },
      {"CosineDecay", "unknown option 'decay_step'", "valid options: alpha, decay_steps"});
  expect_usage_error(
      [] {
        make_schedule(
            {{"class_name", "ExponentialDecay"},
             {"config",
              {{"initial_learning_rate", 0.1}, {"decay_steps", 2.5}, {"decay_rate", 0.5}}}});
      },
      {"ExponentialDecay", "option 'decay_steps' has the wrong type", "expected integer"});
}

}  // namespace
}  // namespace drun::optim

// The option schemas of fit and compile: the one list of each, which
// parse_fit_request, parse_compile_options and Lua's Model:fit check against.
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

TEST(FitSchema, IsTheInputOptionsAndTheRunOptionsWithFitConfigsDefaults) {
  testing::expect_schema_documented(fit_schema());
  EXPECT_EQ(fit_schema().options.size(),
            fit_input_schema().options.size() + fit_run_schema().options.size());
  for (const char* input : {"x", "validation_data", "batch_size", "hooks", "callbacks"}) {
    EXPECT_NE(fit_input_schema().find(input), nullptr) << input;
    EXPECT_EQ(fit_run_schema().find(input), nullptr) << input;
  }
  const FitConfig d;
  EXPECT_EQ(fit_run_schema().find("epochs")->fallback, d.epochs);
  EXPECT_EQ(fit_run_schema().find("keep_checkpoint_max")->fallback, d.keep_checkpoint_max);
  EXPECT_EQ(fit_run_schema().find("eval_steps")->fallback, d.eval_steps);
  // What the run schema lists is what parse_fit_request takes.
  for (const OptionSpec& o : fit_run_schema().options) {
    json value = o.type == OptionType::string ? json("") : json(1);
    if (o.name == "strategy") value = {{"name", "AllReduce"}};
    EXPECT_NO_THROW(parse_fit_request({{o.name, value}})) << o.name;
  }
  expect_usage_error([] { parse_fit_request({{"x", 1}}); }, {"fit", "unknown option 'x'"});
  expect_usage_error(
      [] {
        Options({{"epoch", 1}}, "fit", fit_schema());
      },
      {"fit: unknown option 'epoch'", "batch_size, callbacks, epochs"});
}

TEST(CompileSchema, ListsWhatParseCompileOptionsReads) {
  testing::expect_schema_documented(compile_schema());
  const CompileOptions d;
  const auto c = parse_compile_options({{"loss", "mse"}});
  EXPECT_EQ(c.optimizer, d.optimizer);
  EXPECT_EQ(c.precision, d.precision);
  EXPECT_EQ(c.cuda_graphs, d.cuda_graphs);
  expect_usage_error(
      [] {
        parse_compile_options({{"optimizer", "sgd"}});
      },
      {"compile", "option 'loss' is required"});
  expect_usage_error(
      [] {
        parse_compile_options({{"loss", "mse"}, {"metric", {"mae"}}});
      },
      {"compile: unknown option 'metric'",
       "valid options: cuda_graphs, loss, metrics, optimizer, precision"});
}

}  // namespace
}  // namespace drun::train

// What the Lua binding hands the runtime for a fit: fit options parsed and
// checked (parse_fit_request), the role decisions of run_fit that need no MPI
// job, plan mode's record, one fit of a small model in one process, and a
// preempted fit's own exception.
#include "train/run_fit.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <type_traits>

#include "data/arrays.hpp"
#include "train/preemption.hpp"
#include "usage_error.hpp"

namespace drun::train {
namespace {

using testing::expect_usage_error;

json dense_spec() {
  return json::parse(R"({"name": "sequential", "layers": [
    {"class_name": "Dense", "config": {"units": 2, "input_shape": [3]}}]})");
}

Session small_session() {
  CompileOptions c;
  c.loss = "mse";
  return Session(std::make_shared<nn::Model>(dense_spec(), 1), c, kernels::Exec{Device::cpu, 1});
}

Input small_input() {
  return {std::make_shared<const data::Dataset>(
              data::dataset_from_arrays(json::parse("[[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 0, 1]]"),
                                        json::parse("[[1, 0], [0, 1], [1, 0], [0, 1]]"))),
          json::parse(R"([{"op": "batch", "size": 2}])")};
}

TEST(FitConfig, ReadsEveryOptionWithDefaults) {
  Options o(json::parse(R"({"epochs": 3, "steps": 10, "model_dir": "d",
                            "save_checkpoints_steps": 4, "save_checkpoints_secs": 1.5,
                            "keep_checkpoint_max": 2, "save_summary_steps": 5,
                            "histogram_freq": 2, "eval_every_steps": 6, "eval_steps": 7})"),
            "fit");
  const auto c = parse_fit_config(o);
  o.finish();
  EXPECT_EQ(c.epochs, 3);
  EXPECT_EQ(c.max_steps, 10);
  EXPECT_EQ(c.model_dir, "d");
  EXPECT_EQ(c.save_checkpoints_steps, 4);
  EXPECT_DOUBLE_EQ(c.save_checkpoints_secs, 1.5);
  EXPECT_EQ(c.keep_checkpoint_max, 2);
  EXPECT_EQ(c.save_summary_steps, 5);
  EXPECT_EQ(c.histogram_freq, 2);
  EXPECT_EQ(c.eval_every_steps, 6);
  EXPECT_EQ(c.eval_steps, 7);
  Options none(json::object(), "fit");
  const auto d = parse_fit_config(none);
  EXPECT_EQ(d.epochs, 1);
  EXPECT_EQ(d.max_steps, -1);
  EXPECT_EQ(d.keep_checkpoint_max, 5);
  EXPECT_EQ(d.eval_steps, -1);
  EXPECT_EQ(d.histogram_freq, 0);
}

TEST(FitConfig, HelpSaysBothCheckpointIntervalsAtZeroWriteNone) {
  // `drun help fit` said 0 meant "only after the last step"; with both at 0
  // fit writes no checkpoint (FitHooks.NoCheckpointIntervalsNoCheckpoints).
  for (const char* key : {"save_checkpoints_steps", "save_checkpoints_secs"}) {
    const OptionSpec* o = fit_run_schema().find(key);
    ASSERT_NE(o, nullptr) << key;
    EXPECT_EQ(o->doc.find("only after the last step"), std::string::npos) << o->doc;
    EXPECT_NE(o->doc.find("0: no checkpoints"), std::string::npos) << o->doc;
  }
}

TEST(FitConfig, StepsWithoutEpochsBoundTheRunAlone) {
  Options steps(json::parse(R"({"steps": 10})"), "fit");
  const auto c = parse_fit_config(steps);
  EXPECT_FALSE(c.epochs_bounded);
  EXPECT_EQ(c.epochs, kUnboundedEpochs);
  Options both(json::parse(R"({"steps": 10, "epochs": 2})"), "fit");
  const auto d = parse_fit_config(both);
  EXPECT_TRUE(d.epochs_bounded);
  EXPECT_EQ(d.epochs, 2);
}

TEST(FitConfig, RefusesTooFewEpochsNegativeIntervalsAndUnknownKeys) {
  const auto request = [](const char* text) { parse_fit_request(json::parse(text)); };
  expect_usage_error([&] { request(R"({"epochs": 0})"); }, {"fit", "epochs must be at least 1"});
  for (const char* key : {"save_checkpoints_steps", "save_checkpoints_secs", "save_summary_steps",
                          "histogram_freq", "eval_every_steps"})
    expect_usage_error([&] { request(("{\"" + std::string(key) + "\": -1}").c_str()); },
                       {"intervals must not be negative"});
  expect_usage_error([&] { request(R"({"epoch": 2})"); }, {"epoch"});
  expect_usage_error([&] { request(R"({"strategy": {"name": "Sparkle"}})"); },
                     {"unknown strategy 'Sparkle'"});
}

TEST(FitRequest, StrategyDefaultsToAllReduceAndResolvesAliases) {
  EXPECT_EQ(parse_fit_request(json::object()).strategy.name, distributed::kDefaultStrategy);
  const auto r = parse_fit_request(json::parse(R"({"strategy": {"name": "MultiWorkerMirrored",
                                                  "options": {"scale_lr": true}}})"));
  EXPECT_EQ(r.strategy.name, "AllReduce");
  EXPECT_TRUE(r.strategy.scale_lr);
}

TEST(RunFit, ParameterServerRoleRefusesAStrategyWithoutServers) {
  auto session = small_session();
  Context ctx;
  ctx.role = "ps";
  const auto request = parse_fit_request(json::object());
  expect_usage_error([&] { run_fit(ctx, session, request, small_input(), nullptr); },
                     {"this rank is a parameter server, but strategy AllReduce uses none"});
}

TEST(RunFit, EvaluatorNeedsAnEvaluationInput) {
  auto session = small_session();
  Context ctx;
  ctx.role = "evaluator";
  expect_usage_error(
      [&] { run_fit(ctx, session, parse_fit_request(json::object()), small_input(), nullptr); },
      {"the evaluator needs an evaluation input"});
}

TEST(RunFit, OneProcessTrainsAndReturnsTheSummary) {
  auto session = small_session();
  Context ctx;
  ctx.quiet = true;
  const auto input = small_input();
  const auto result =
      run_fit(ctx, session, parse_fit_request(json::parse(R"({"epochs": 2})")), input, &input);
  EXPECT_EQ(result["global_step"], 4);
  EXPECT_EQ(result["epochs"], 2);
  EXPECT_EQ(result["workers"], 1);
  EXPECT_TRUE(result.contains("eval"));
  EXPECT_EQ(session.strategy, nullptr);  // one process: no strategy joined
}

// A preempted fit is neither a user's mistake nor a bug: it throws its own
// exception, which carries the exit code the process ends with (75).
static_assert(!std::is_base_of_v<UsageError, Preempted>);

// The "fast" death test style forks without exec: under qemu-user (the
// ppc64le suite) the "threadsafe" style's re-exec of a foreign binary fails.
// GoogleTest runs *DeathTest suites first, before other tests start threads.
TEST(RunFitDeathTest, APreemptedFitThrowsPreemptedWithItsExitCode) {
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        auto session = small_session();
        Context ctx;
        ctx.quiet = true;
        install_preemption_handlers();
        std::raise(SIGTERM);  // recorded; the fit stops after its step
        try {
          run_fit(ctx, session, parse_fit_request(json::parse(R"({"epochs": 2})")), small_input(),
                  nullptr);
        } catch (const Preempted& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::_Exit(e.exit_code());
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(kPreemptedExitCode), "preempted at step 1; no model_dir");
}

// A rerun of a finished fit trains nothing and returns (and keeps) the
// summary of the run that trained, its evaluation included.
TEST(RunFit, ARerunOfAFinishedFitKeepsItsSummary) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("drun_test_rerun_" + std::to_string(std::random_device{}()));
  struct Remove {
    std::filesystem::path p;
    ~Remove() { std::filesystem::remove_all(p); }
  } remove{dir};
  const auto request = parse_fit_request(
      json{{"epochs", 2}, {"model_dir", dir.string()}, {"save_checkpoints_secs", 600}});
  const auto input = small_input();
  Context ctx;
  ctx.quiet = true;
  auto first = small_session();
  const auto trained = run_fit(ctx, first, request, input, &input);
  ASSERT_TRUE(std::filesystem::exists(dir / "ckpt-4.h5"));
  auto second = small_session();
  const auto rerun = run_fit(ctx, second, request, input, &input);
  EXPECT_EQ(rerun["global_step"], 4);
  EXPECT_EQ(rerun["eval"], trained["eval"]);
  EXPECT_EQ(rerun["wall_seconds"], trained["wall_seconds"]);  // the first run's summary
}

TEST(MakePipeline, ShardsForWorkersUnlessTheOpsShardAlready) {
  const auto input = small_input();
  EXPECT_EQ(make_pipeline(input)->batches_per_epoch(), 2);
  EXPECT_EQ(make_pipeline(input, 2, 1)->batches_per_epoch(), 1);
  Input sharded = input;
  sharded.ops = json::parse(R"([{"op": "shard", "count": 2, "index": 0},
                                {"op": "batch", "size": 2}])");
  expect_usage_error([&] { make_pipeline(sharded, 2, 0); }, {"sharded over the workers already"});
}

TEST(PlanFit, RecordsTheParsedStrategyAndTheModel) {
  Context ctx;
  ctx.plan = true;
  nn::Model model(dense_spec(), 1);
  plan_fit(ctx, model, nullptr);
  ASSERT_TRUE(ctx.planned_fit);
  EXPECT_EQ(ctx.planned_fit->strategy.name, distributed::kDefaultStrategy);
  EXPECT_NE(ctx.planned_fit->model_summary.find("Total params"), std::string::npos);
  plan_fit(ctx, model, json::parse(R"({"name": "Downpour", "options": {"n_push": 2}})"));
  EXPECT_TRUE(ctx.planned_fit->strategy.uses_servers());
  EXPECT_EQ(ctx.planned_fit->strategy.options["n_push"], 2);
  expect_usage_error([&] { plan_fit(ctx, model, json::parse(R"({"name": "Sparkle"})")); },
                     {"unknown strategy 'Sparkle'"});
}

TEST(DatasetFromArrays, IntegerLabelsBecomeClassIdsAndRaggedListsAreRefused) {
  const auto ds = data::dataset_from_arrays(json::parse("[[1, 2], [3, 4]]"), json::parse("[0, 1]"));
  EXPECT_EQ(ds.y.dtype(), DType::i32);
  EXPECT_EQ(ds.x.dim(1), 2);
  const auto reg = data::dataset_from_arrays(json::parse("[[1], [2]]"), json::parse("[0.5, 1]"));
  EXPECT_EQ(reg.y.dim(1), 1);
  expect_usage_error(
      [] { data::dataset_from_arrays(json::parse("[[1, 2], [3]]"), json::parse("[0, 1]")); },
      {"data.arrays x", "ragged"});
  expect_usage_error([] { data::dataset_from_arrays(json::parse("[]"), json::parse("[0]")); },
                     {"data.arrays x", "empty list"});
}

}  // namespace
}  // namespace drun::train

// Fit's own hooks in one process: checkpoints at the interval and after the
// last step (recording where a rerun continues), none twice at one step;
// TensorBoard event files for training and evaluation, weight histograms at
// Keras' epochs; evaluation at the step interval and after each epoch; the
// user's hooks first, and their stop.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "data/arrays.hpp"
#include "temp_file.hpp"
#include "toy_fit.hpp"
#include "train/trainer.hpp"

namespace drun::train {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

using Fixture = testing::ToyFit;

// Records the calls it sees; stops after global step `stop_at` (0: never).
class Recorder final : public Hook {
 public:
  explicit Recorder(int64_t stop_at = 0) : stop_at_(stop_at) {}
  std::string name() const override { return "Recorder"; }
  bool after_step(const StepResult& s) override {
    steps.push_back(s.global_step);
    return stop_at_ > 0 && s.global_step >= stop_at_;
  }
  void continuing(const StepResult& s) override { continued.push_back(s.global_step); }
  void last_step(const TrainingState& at, bool preempted) override {
    last = at;
    last_preempted = preempted;
  }
  void end_epoch(EpochEnd& e) override { epochs.push_back(e.epoch); }
  std::vector<int64_t> steps, continued, epochs;
  std::optional<TrainingState> last;
  bool last_preempted = true;

 private:
  int64_t stop_at_;
};

TEST(FitHooks, CheckpointsAtTheIntervalAndAfterTheLastStep) {
  Fixture f;
  TempDir dir;
  FitConfig c;
  c.epochs = 3;
  c.model_dir = dir.path();
  c.save_checkpoints_steps = 5;
  Recorder rec;
  c.hooks = {&rec};
  const auto r = f.trainer.fit(f.train, nullptr, c, f.progress);
  EXPECT_EQ(r.global_step, 12);
  EXPECT_EQ(Checkpoints(dir.path(), 5).steps(), (std::vector<int64_t>{5, 10, 12}));
  ASSERT_TRUE(rec.last);
  EXPECT_EQ(rec.last->global_step, 12);
  EXPECT_EQ(rec.last->epoch, 3);  // the run is complete: a rerun starts after it
  EXPECT_EQ(rec.last->batch, 0);
  EXPECT_FALSE(rec.last_preempted);
  EXPECT_EQ(rec.epochs, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(rec.continued.size(), 12u);  // no stop: every step goes on
  EXPECT_TRUE(fs::exists(dir.path() + "/summary.json"));
}

TEST(FitHooks, AStopMidEpochCheckpointsWhereARerunContinues) {
  Fixture f;
  TempDir dir;
  FitConfig c;
  c.epochs = 3;
  c.model_dir = dir.path();
  c.save_checkpoints_steps = 100;
  Recorder rec(6);
  c.hooks = {&rec};
  const auto r = f.trainer.fit(f.train, nullptr, c, f.progress);
  EXPECT_TRUE(r.stopped_by_hook);
  EXPECT_EQ(r.global_step, 6);
  EXPECT_EQ(Checkpoints(dir.path(), 5).steps(), (std::vector<int64_t>{6}));
  nn::Model other(f.model.spec(), 2);
  auto opt = optim::make_optimizer(f.trainer.compiled().optimizer);
  const auto state = Checkpoints(dir.path(), 5).load(6, other, *opt);
  EXPECT_EQ(state.epoch, 1);
  EXPECT_EQ(state.batch, 2);
  EXPECT_EQ(rec.continued.size(), 5u);  // not after the step that stopped
}

TEST(FitHooks, NoCheckpointIntervalsNoCheckpoints) {
  Fixture f;
  TempDir dir;
  FitConfig c;
  c.model_dir = dir.path();
  f.trainer.fit(f.train, nullptr, c, f.progress);
  EXPECT_TRUE(Checkpoints(dir.path(), 5).steps().empty());
}

TEST(FitHooks, SummariesAndEvaluationWriteTheirEventFiles) {
  Fixture f;
  TempDir dir;
  FitConfig c;
  c.epochs = 2;
  c.model_dir = dir.path();
  c.save_summary_steps = 2;
  c.eval_every_steps = 3;
  const auto r = f.trainer.fit(f.train, &f.eval, c, f.progress);
  ASSERT_TRUE(r.eval);
  EXPECT_EQ(r.eval->examples, 8);
  const auto events_in = [](const std::string& d) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(d))
      n += e.path().filename().string().starts_with("events.out.tfevents.");
    return n;
  };
  EXPECT_EQ(events_in(dir.path()), 1);
  EXPECT_EQ(events_in(dir.path() + "/eval"), 1);
}

TEST(FitHooks, HistogramsEveryHistogramFreqEpochsWithoutScalars) {
  // Keras counts epochs from 0: with 2, epochs 0 and 2 of 3 get histograms.
  // Each histogram's record names its tag once, and no scalar says "loss".
  Fixture f;
  TempDir dir;
  FitConfig c;
  c.epochs = 3;
  c.model_dir = dir.path();
  c.histogram_freq = 2;
  f.trainer.fit(f.train, nullptr, c, f.progress);
  std::string bytes;
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().filename().string().starts_with("events.out.tfevents.")) {
      std::ifstream in(e.path(), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
  const auto count = [&](const std::string& tag) {
    int n = 0;
    for (size_t at = bytes.find(tag); at != std::string::npos; at = bytes.find(tag, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("dense/kernel"), 2);
  EXPECT_EQ(count("dense/bias"), 2);
  EXPECT_EQ(count("loss"), 0);
}

TEST(FitHooks, MaxStepsStopsWithoutAHook) {
  Fixture f;
  FitConfig c;
  c.epochs = 5;
  c.max_steps = 7;
  Recorder rec;
  c.hooks = {&rec};
  const auto r = f.trainer.fit(f.train, nullptr, c, f.progress);
  EXPECT_EQ(r.global_step, 7);
  EXPECT_FALSE(r.stopped_by_hook);
  EXPECT_EQ(r.epochs, 2);
  ASSERT_TRUE(rec.last);
  EXPECT_EQ(rec.last->epoch, 1);
  EXPECT_EQ(rec.last->batch, 3);
}

TEST(FitHooks, AnEvaluationWithinTheEpochLeavesTheTrainingMetrics) {
  // Evaluating at step 4, the epoch's last, must not reset the epoch's
  // running training loss that summary.json reports.
  Fixture plain, interval;
  FitConfig c;
  const auto without = plain.trainer.fit(plain.train, &plain.eval, c, plain.progress);
  c.eval_every_steps = 4;
  const auto with = interval.trainer.fit(interval.train, &interval.eval, c, interval.progress);
  EXPECT_GT(without.train.loss, 0.0);
  EXPECT_EQ(with.train.loss, without.train.loss);
  EXPECT_EQ(with.train.examples, 8);
  ASSERT_TRUE(with.eval);
  EXPECT_EQ(with.eval->loss, without.eval->loss);
}

TEST(FitHooks, AStopAtAnEvaluationStepStillEvaluatesTheFinalModel) {
  // max_steps 6 is a multiple of eval_every_steps 3: the last step runs no
  // interval evaluation, so the end of the fit must evaluate.
  Fixture f;
  FitConfig c;
  c.epochs = 5;
  c.max_steps = 6;
  c.eval_every_steps = 3;
  const auto r = f.trainer.fit(f.train, &f.eval, c, f.progress);
  EXPECT_EQ(r.global_step, 6);
  ASSERT_TRUE(r.eval);
  const Evaluation now = f.trainer.evaluate(f.eval);
  EXPECT_EQ(r.eval->loss, now.loss);  // the evaluation was of the final weights
}

}  // namespace
}  // namespace drun::train

namespace drun::train {
namespace {

// A strategy whose updates happen elsewhere (the parameter-server family's
// shape): the worker's loss scale would never see them.
class ElsewhereStrategy final : public distributed::Strategy {
 public:
  std::string name() const override { return "ParameterServer"; }
  int workers() const override { return 1; }
  int worker_index() const override { return 0; }
  void setup(std::span<Param* const>) override {}
  void apply(optim::Optimizer&, std::span<Param* const>) override {}
  void sum(double*, int64_t) override {}
};

TEST(LossScaleOptimizer, RefusedWhereServersApplyTheUpdates) {
  nn::Model model(json::parse(R"({"name": "m", "input_shape": [3], "layers": [
    {"class_name": "Dense", "config": {"units": 2}}]})"),
                  1);
  CompileOptions c;
  c.loss = "mse";
  c.optimizer = json::parse(R"({"class_name": "LossScaleOptimizer",
                                "config": {"inner_optimizer": "sgd"}})");
  Trainer trainer(model, c, kernels::Exec{});
  ElsewhereStrategy servers;
  try {
    trainer.set_strategy(&servers);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not with ParameterServer"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace drun::train

// Gradient accumulation (Keras 3's gradient_accumulation_steps): 4 batches
// of 16 make the update one batch of the same 64 examples makes, Adam's
// bias correction and the schedule count as Keras counts, a checkpoint in
// the middle of a cycle resumes exactly, the accumulating step allocates
// nothing once warm, and bad values are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "allocation_counter.hpp"
#include "base/rng.hpp"
#include "nn/model.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"
#include "usage_error.hpp"

namespace drun::train {
namespace {

using testing::AllocationCounter;
using testing::expect_usage_error;

// No batch norm: a batch's statistics would make 4 x 16 differ from 64.
json mlp_spec() {
  return json::parse(R"({"name": "sequential", "layers": [
    {"class_name": "Dense", "config": {"units": 16, "activation": "tanh", "input_shape": [8]}},
    {"class_name": "Dense", "config": {"units": 4}}]})");
}

CompileOptions compiled(json optimizer_config, const char* cls = "Adam") {
  CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer = {{"class_name", cls}, {"config", std::move(optimizer_config)}};
  return c;
}

// n examples of 8 features with labels in 0..3, the same for every seed-7 call.
data::Batch examples(int64_t n) {
  Rng rng(7);
  data::Batch b;
  b.x = Tensor(Shape{n, 8});
  b.y = Tensor(Shape{n}, DType::i32);
  for (float& v : b.x.span_f32()) v = rng.uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) b.y.i32()[i] = static_cast<int32_t>(rng.uniform(0.0f, 4.0f)) % 4;
  b.size = n;
  return b;
}

// Rows [from, from + n) of `all`, as a batch of its own.
data::Batch rows(const data::Batch& all, int64_t from, int64_t n) {
  data::Batch b;
  b.x = all.x.rows(from, from + n).clone();
  b.y = all.y.rows(from, from + n).clone();
  b.size = n;
  return b;
}

// Trains `steps` batches of `batch` examples, in order, from `first` on.
void train(Trainer& t, const data::Batch& all, int64_t batch, int64_t first, int64_t steps) {
  for (int64_t s = first; s < first + steps; ++s) t.train_step(rows(all, s * batch, batch));
}

float max_difference(nn::Model& a, nn::Model& b) {
  float d = 0.f;
  const auto pa = a.params(), pb = b.params();
  for (size_t i = 0; i < pa.size(); ++i) {
    const auto x = pa[i]->value.span_f32(), y = pb[i]->value.span_f32();
    for (size_t j = 0; j < x.size(); ++j) d = std::max(d, std::abs(x[j] - y[j]));
  }
  return d;
}

TEST(GradientAccumulation, FourBatchesOf16UpdateAsOneOf64) {
  const data::Batch all = examples(64 * 5);
  for (const char* cls : {"Adam", "SGD"}) {
    const json base = json::parse(R"({"learning_rate": 0.05, "global_clipnorm": 1.0})");
    json accumulated = base;
    accumulated["gradient_accumulation_steps"] = 4;
    if (std::string(cls) == "SGD") accumulated["momentum"] = 0.9;
    json whole = accumulated;
    whole.erase("gradient_accumulation_steps");
    nn::Model big(mlp_spec(), 3), small(mlp_spec(), 3), initial(mlp_spec(), 3);
    Trainer at64(big, compiled(whole, cls), kernels::Exec{Device::cpu, 1});
    Trainer at16(small, compiled(accumulated, cls), kernels::Exec{Device::cpu, 1});
    train(at64, all, 64, 0, 5);
    train(at16, all, 16, 0, 20);
    EXPECT_LE(max_difference(big, small), 1e-5f) << cls;
    EXPECT_GT(max_difference(big, initial), 1e-2f) << cls << ": the runs moved the variables";
    // Keras counts batches in its saved `_iterations`, updates in optimizer.iterations.
    EXPECT_EQ(at16.optimizer().iterations(), 20) << cls;
    EXPECT_EQ(at16.optimizer().updates(), 5) << cls;
    EXPECT_EQ(at16.global_step(), 20) << cls;
  }
}

TEST(GradientAccumulation, BatchesInsideACycleLeaveTheVariablesAlone) {
  const data::Batch all = examples(16 * 3);
  nn::Model model(mlp_spec(), 3), untouched(mlp_spec(), 3);
  Trainer t(model, compiled({{"gradient_accumulation_steps", 4}}), kernels::Exec{Device::cpu, 1});
  train(t, all, 16, 0, 3);
  EXPECT_EQ(max_difference(model, untouched), 0.f);
  EXPECT_EQ(t.optimizer().updates(), 0);
}

TEST(GradientAccumulation, ResumesFromACheckpointInTheMiddleOfACycle) {
  const auto dir = std::filesystem::temp_directory_path() / "drun_accumulation_resume";
  std::filesystem::remove_all(dir);
  const data::Batch all = examples(16 * 12);
  const CompileOptions c = compiled({{"learning_rate", 0.05}, {"gradient_accumulation_steps", 4}});
  nn::Model straight(mlp_spec(), 3), first(mlp_spec(), 3), second(mlp_spec(), 3);
  Trainer whole(straight, c, kernels::Exec{Device::cpu, 1});
  train(whole, all, 16, 0, 12);
  {
    Trainer stopped(first, c, kernels::Exec{Device::cpu, 1});
    train(stopped, all, 16, 0, 6);  // one update, two batches accumulated
    Checkpoints checkpoints(dir.string(), 1);
    stopped.save_checkpoint(checkpoints, {6, 0, 6});
  }
  Trainer resumed(second, c, kernels::Exec{Device::cpu, 1});
  ASSERT_TRUE(resumed.restore(dir.string(), [](const std::string&) {}));
  EXPECT_EQ(resumed.global_step(), 6);
  train(resumed, all, 16, 6, 6);
  EXPECT_EQ(max_difference(straight, second), 0.f);
  EXPECT_GT(max_difference(straight, first), 0.f) << "updates after the checkpoint";
  std::filesystem::remove_all(dir);
}

TEST(GradientAccumulation, AccumulatingStepAllocatesNothingOnceWarm) {
  nn::Model model(mlp_spec(), 3);
  Trainer t(model, compiled({{"gradient_accumulation_steps", 4}}), kernels::Exec{Device::cpu, 1});
  const data::Batch batch = rows(examples(16), 0, 16);
  for (int i = 0; i < 8; ++i) t.train_step(batch);  // two cycles: everything made
  AllocationCounter counter;
  for (int i = 0; i < 8; ++i) t.train_step(batch);
  EXPECT_EQ(counter.stop(), 0);
}

TEST(GradientAccumulation, ConfigKeepsItAndBadValuesAreRefused) {
  const auto opt = optim::make_optimizer(
      json::parse(R"({"class_name": "SGD", "config": {"gradient_accumulation_steps": 4}})"));
  EXPECT_EQ(opt->accumulation_steps(), 4);
  EXPECT_EQ(opt->config()["config"]["gradient_accumulation_steps"], 4);
  EXPECT_EQ(optim::make_optimizer(optim::without_accumulation(opt->config()))->accumulation_steps(),
            1);
  // Keras writes null where there is none.
  const auto none = optim::make_optimizer(
      json::parse(R"({"class_name": "Adam", "config": {"gradient_accumulation_steps": null}})"));
  EXPECT_EQ(none->accumulation_steps(), 1);
  EXPECT_FALSE(none->config()["config"].contains("gradient_accumulation_steps"));
  expect_usage_error(
      [] {
        optim::make_optimizer(
            json::parse(R"({"class_name": "SGD", "config": {"gradient_accumulation_steps": 0}})"));
      },
      {"SGD", "gradient_accumulation_steps", "0"});
  expect_usage_error(
      [] {
        optim::make_optimizer(json::parse(
            R"({"class_name": "SGD", "config": {"gradient_accumulation_steps": 2.5}})"));
      },
      {"gradient_accumulation_steps"});
  expect_usage_error(
      [] {
        optim::make_optimizer(json::parse(R"({"class_name": "LossScaleOptimizer", "config":
          {"inner_optimizer": {"class_name": "SGD", "config": {"gradient_accumulation_steps": 2}}}})"));
      },
      {"gradient_accumulation_steps", "loss scale"});
}

}  // namespace
}  // namespace drun::train

// The steady-state training step allocates nothing (allocation_counter.cpp
// counts every global operator new). Covers Trainer::train_step on the seed CNN with 1 and 2
// threads, and a pipeline's next() + train_step within an epoch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>

#include "allocation_counter.hpp"
#include "base/rng.hpp"
#include "data/pipeline.hpp"
#include "nn/model.hpp"
#include "seed_cnn.hpp"
#include "train/trainer.hpp"

namespace drun::train {
namespace {

using testing::AllocationCounter;
using testing::seed_cnn_spec;

CompileOptions seed_compiled() {
  CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer =
      json::parse(R"({"class_name": "SGD", "config": {"learning_rate": 0.01, "momentum": 0.9}})");
  c.metrics = {"accuracy", "sparse_top_k_categorical_accuracy"};  // a sum and a counted metric
  return c;
}

// n random 28x28x1 images in [0, 1) with labels in 0..9.
void fill_random(Tensor& x, Tensor& y, int64_t n, uint64_t seed) {
  Rng rng(seed);
  x = Tensor(Shape{n, 28, 28, 1});
  y = Tensor(Shape{n}, DType::i32);
  for (float& v : x.span_f32()) v = rng.uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) y.i32()[i] = static_cast<int32_t>(rng.uniform(0.0f, 10.0f)) % 10;
}

TEST(StepAllocation, CounterSeesAlignedAndPlainNew) {
  AllocationCounter counter;
  {
    Tensor t(Shape{16});  // aligned new inside Storage, plus the shared_ptr block
    // Plain new, called directly: a new-expression's allocation may be elided.
    void* p = ::operator new(sizeof(int));
    ::operator delete(p);
  }
  EXPECT_GE(counter.stop(), 3);
}

class SteadyStep : public ::testing::TestWithParam<int> {};

TEST_P(SteadyStep, TrainStepAllocatesNothingOnceWarm) {
  const int threads = GetParam();
  nn::Model model(seed_cnn_spec(), 3);
  Trainer trainer(model, seed_compiled(), kernels::Exec{Device::cpu, threads});
  data::Batch batch;
  fill_random(batch.x, batch.y, 64, 11);
  batch.size = 64;

  for (int i = 0; i < 3; ++i) trainer.train_step(batch);  // warm up
  double loss = 0.0;
  AllocationCounter counter;
  for (int i = 0; i < 5; ++i) {
    trainer.train_step(batch);
    loss += trainer.last_loss();
  }
  const long allocs = counter.stop();
  EXPECT_EQ(allocs, 0) << "5 warm train_steps with " << threads << " thread(s) allocated";
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(trainer.global_step(), 8);
}

INSTANTIATE_TEST_SUITE_P(Threads, SteadyStep, ::testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "_threads"; });

// Activations whose backward reads the pre-activation (gelu, swish) keep it
// in a buffer of the layer, sized once like the others.
TEST(StepAllocation, LayersKeepingThePreActivationAllocateNothingOnceWarm) {
  const json spec = json::parse(R"({"name": "m", "input_shape": [28, 28, 1], "layers": [
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 3, "activation": "gelu"}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 16, "activation": "swish"}},
    {"class_name": "LeakyReLU", "config": {}},
    {"class_name": "Dense", "config": {"units": 10, "activation": "elu"}}]})");
  nn::Model model(spec, 3);
  Trainer trainer(model, seed_compiled(), kernels::Exec{Device::cpu, 1});
  data::Batch batch;
  fill_random(batch.x, batch.y, 32, 12);
  batch.size = 32;
  for (int i = 0; i < 3; ++i) trainer.train_step(batch);
  AllocationCounter counter;
  double loss = 0.0;
  for (int i = 0; i < 3; ++i) {
    trainer.train_step(batch);
    loss += trainer.last_loss();
  }
  EXPECT_EQ(counter.stop(), 0) << "3 warm train_steps allocated";
  EXPECT_TRUE(std::isfinite(loss));
}

// The sequence layers' buffers and per-step views (recurrent steps'
// rows, attention's heads, the shape layers' copies) are sized once too.
TEST(StepAllocation, SequenceLayersAllocateNothingOnceWarm) {
  const json spec = json::parse(R"({"name": "m", "input_shape": [28, 28, 1], "layers": [
    {"class_name": "Reshape", "config": {"target_shape": [28, 28]}},
    {"class_name": "Conv1D", "config": {"filters": 8, "kernel_size": 3, "padding": "causal"}},
    {"class_name": "LayerNormalization", "config": {}},
    {"class_name": "MultiHeadAttention", "config": {"num_heads": 2, "key_dim": 4,
     "use_causal_mask": true}, "inbound": [2, 2]},
    {"class_name": "LSTM", "config": {"units": 8, "return_sequences": true}},
    {"class_name": "GRU", "config": {"units": 6, "return_sequences": true}},
    {"class_name": "Dense", "config": {"units": 4, "activation": "gelu"}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  nn::Model model(spec, 3);
  Trainer trainer(model, seed_compiled(), kernels::Exec{Device::cpu, 1});
  data::Batch batch;
  fill_random(batch.x, batch.y, 16, 13);
  batch.size = 16;
  for (int i = 0; i < 3; ++i) trainer.train_step(batch);
  AllocationCounter counter;
  double loss = 0.0;
  for (int i = 0; i < 3; ++i) {
    trainer.train_step(batch);
    loss += trainer.last_loss();
  }
  EXPECT_EQ(counter.stop(), 0) << "3 warm train_steps allocated";
  EXPECT_TRUE(std::isfinite(loss));
}

// A decoder's transposed convolutions: their pre-activations, workspaces
// and output gradients are sized once too.
TEST(StepAllocation, TransposedConvolutionsAllocateNothingOnceWarm) {
  const json spec = json::parse(R"({"name": "m", "input_shape": [28, 28, 1], "layers": [
    {"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3, "strides": 2,
     "padding": "same", "activation": "relu"}},
    {"class_name": "Conv2DTranspose", "config": {"filters": 4, "kernel_size": 3, "strides": 2,
     "padding": "same", "activation": "gelu"}},
    {"class_name": "Conv2DTranspose", "config": {"filters": 2, "kernel_size": 3, "strides": 2,
     "output_padding": 1}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  nn::Model model(spec, 3);
  Trainer trainer(model, seed_compiled(), kernels::Exec{Device::cpu, 1});
  data::Batch batch;
  fill_random(batch.x, batch.y, 16, 14);
  batch.size = 16;
  for (int i = 0; i < 3; ++i) trainer.train_step(batch);
  AllocationCounter counter;
  double loss = 0.0;
  for (int i = 0; i < 3; ++i) {
    trainer.train_step(batch);
    loss += trainer.last_loss();
  }
  EXPECT_EQ(counter.stop(), 0) << "3 warm train_steps allocated";
  EXPECT_TRUE(std::isfinite(loss));
}

// A MobileNet-like block: the depthwise and pointwise buffers too.
TEST(StepAllocation, DepthwiseAndSeparableConvolutionsAllocateNothingOnceWarm) {
  const json spec = json::parse(R"({"name": "m", "input_shape": [28, 28, 1], "layers": [
    {"class_name": "DepthwiseConv2D", "config": {"kernel_size": 3, "depth_multiplier": 4,
     "strides": 2, "padding": "same", "use_bias": false}},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "ReLU", "config": {}},
    {"class_name": "SeparableConv2D", "config": {"filters": 8, "kernel_size": 3,
     "activation": "gelu"}},
    {"class_name": "GlobalAveragePooling2D", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  nn::Model model(spec, 3);
  Trainer trainer(model, seed_compiled(), kernels::Exec{Device::cpu, 1});
  data::Batch batch;
  fill_random(batch.x, batch.y, 16, 17);
  batch.size = 16;
  for (int i = 0; i < 3; ++i) trainer.train_step(batch);
  AllocationCounter counter;
  double loss = 0.0;
  for (int i = 0; i < 3; ++i) {
    trainer.train_step(batch);
    loss += trainer.last_loss();
  }
  EXPECT_EQ(counter.stop(), 0) << "3 warm train_steps allocated";
  EXPECT_TRUE(std::isfinite(loss));
}

TEST(StepAllocation, PipelineNextAndTrainStepAllocateNothingWithinAnEpoch) {
  auto ds = std::make_shared<data::Dataset>();
  fill_random(ds->x, ds->y, 256, 5);
  data::PipelineSpec spec;
  spec.batch_size = 64;
  spec.shuffle = true;
  spec.seed = 42;
  data::Pipeline pipeline(ds, spec);
  ASSERT_EQ(pipeline.batches_per_epoch(), 4);

  nn::Model model(seed_cnn_spec(), 3);
  Trainer trainer(model, seed_compiled(), kernels::Exec{Device::cpu, 1});
  data::Batch batch;
  // Warm up: one whole epoch.
  pipeline.start_epoch(0);
  while (pipeline.next(batch)) trainer.train_step(batch);

  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    pipeline.start_epoch(epoch);
    int64_t steps = 0;
    AllocationCounter counter;
    while (pipeline.next(batch)) {
      trainer.train_step(batch);
      ++steps;
    }
    const long allocs = counter.stop();
    EXPECT_EQ(steps, 4);
    EXPECT_EQ(allocs, 0) << "epoch " << epoch << ": next() + train_step allocated";
  }
}

}  // namespace
}  // namespace drun::train

// The runtime's GPU plumbing on the emulated GPU (emulated_gpu.cpp), in CI:
// the same model trained with Exec{cuda} and with Exec{cpu} must give the
// same numbers to the bit (the emulated ops are the CPU's, one thread each),
// every variable, gradient and optimizer slot must live on the device, and
// fit()'s checkpoints, evaluation and prediction must read them back. A
// tensor that stayed on the host, or a host reader of device memory, fails
// the dispatcher's device check or these comparisons.
#include "emulated_gpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/rng.hpp"
#include "data/pipeline.hpp"
#include "nn/model.hpp"
#include "seed_cnn.hpp"
#include "train/callbacks/callback_registry.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

namespace drun::train {
namespace {

CompileOptions compiled(const char* optimizer) {
  CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer = json::parse(optimizer);
  c.metrics = {"accuracy", "sparse_top_k_categorical_accuracy"};  // a sum and a counted metric
  return c;
}

std::shared_ptr<data::Dataset> random_images(int64_t n, int64_t side, int64_t channels,
                                             uint64_t seed) {
  auto ds = std::make_shared<data::Dataset>();
  Rng rng(seed);
  ds->x = Tensor(Shape{n, side, side, channels});
  ds->y = Tensor(Shape{n}, DType::i32);
  for (float& v : ds->x.span_f32()) v = rng.uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i)
    ds->y.i32()[i] = static_cast<int32_t>(rng.uniform(0.0f, 10.0f)) % 10;
  return ds;
}

// Conv + BatchNorm + residual Add + Dropout + average and global pooling:
// every layer kind with state or buffers of its own.
json residual_spec() {
  return json::parse(R"({"name": "residual", "input_shape": [12, 12, 3], "layers": [
    {"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3, "padding": "same"}},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "Activation", "config": {"activation": "relu"}},
    {"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3, "padding": "same",
                                        "use_bias": false}},
    {"class_name": "Add", "config": {}, "inbound": [2, 3]},
    {"class_name": "AveragePooling2D", "config": {"pool_size": 2}},
    {"class_name": "Dropout", "config": {"rate": 0.25, "seed": 5}},
    {"class_name": "GlobalAveragePooling2D", "config": {}},
    {"class_name": "Dense", "config": {"units": 10, "activation": "tanh"}}]})");
}

// One step, and its mean loss (read back).
double step_loss(Trainer& trainer, const data::Batch& batch) {
  trainer.train_step(batch);
  return trainer.last_loss();
}

void expect_same_variables(nn::Model& gpu, nn::Model& cpu) {
  auto g = gpu.params(), c = cpu.params();
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(g[i]->value.device(), Device::cuda) << g[i]->name;
    if (g[i]->grad.defined()) {
      EXPECT_EQ(g[i]->grad.device(), Device::cuda) << g[i]->name;
    }
    const Tensor gv = g[i]->value.to(Device::cpu);
    for (int64_t k = 0; k < gv.numel(); ++k)
      ASSERT_EQ(gv.f32()[k], c[i]->value.f32()[k]) << g[i]->name << " element " << k;
  }
}

// Trains `spec` (seeded with `seed`) with Adam on the emulated GPU and on the
// CPU, 8 of x's examples a step (labels i % 10): each step's loss, and then
// every variable, must agree to the bit.
void expect_trains_as_on_the_cpu(const json& spec, uint64_t seed, const Tensor& x, int steps) {
  const char* adam = R"({"class_name": "Adam", "config": {"learning_rate": 0.01}})";
  nn::Model on_gpu(spec, seed), on_cpu(spec, seed);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(adam), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(adam), kernels::Exec{Device::cpu, 1});
  Tensor y(Shape{x.dim(0)}, DType::i32);
  for (int64_t i = 0; i < x.dim(0); ++i) y.i32()[i] = static_cast<int32_t>(i % 10);
  data::Batch batch;
  for (int step = 0; step < steps; ++step) {
    batch.x = x.rows(step * 8, step * 8 + 8);
    batch.y = y.rows(step * 8, step * 8 + 8);
    batch.size = 8;
    const double g = step_loss(gpu, batch), c = step_loss(cpu, batch);
    EXPECT_EQ(g, c) << "step " << step;
    EXPECT_TRUE(std::isfinite(c)) << "step " << step;
  }
  expect_same_variables(on_gpu, on_cpu);
}

// Examples with values uniform in [-scale, scale].
Tensor uniform_examples(const Shape& shape, uint64_t seed, float scale = 1.0f) {
  Rng rng(seed);
  Tensor x(shape);
  for (float& v : x.span_f32()) v = rng.uniform(-scale, scale);
  return x;
}

TEST(EmulatedGpu, SeedCnnStepsMatchTheCpuBitForBit) {
  const char* sgd = R"({"class_name": "SGD", "config": {"learning_rate": 0.05, "momentum": 0.9}})";
  nn::Model on_gpu(testing::seed_cnn_spec(), 3), on_cpu(testing::seed_cnn_spec(), 3);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(sgd), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(sgd), kernels::Exec{Device::cpu, 1});
  const auto ds = random_images(64, 28, 1, 7);
  data::Batch batch;
  for (int step = 0; step < 5; ++step) {
    batch.x = ds->x.rows(step * 8, step * 8 + 8);
    batch.y = ds->y.rows(step * 8, step * 8 + 8);
    batch.size = 8;
    EXPECT_EQ(step_loss(gpu, batch), step_loss(cpu, batch)) << "step " << step;
  }
  expect_same_variables(on_gpu, on_cpu);
  const auto slots = gpu.optimizer().state();
  ASSERT_EQ(slots.size(), 6u);  // a momentum per variable
  for (const auto& [name, t] : slots) EXPECT_EQ(t->device(), Device::cuda) << name;
}

// A GPU step waits for none of its values (what CUDA graphs need): warm
// steps copy their batch to the device (images and labels) and nothing back;
// the losses and accuracy come back in one copy when read, and equal the
// CPU's. The seed CNN, and the residual model (batch norm, Dropout:
// its mask is drawn on the device).
TEST(EmulatedGpu, StepsCopyNothingBackUntilAValueIsRead) {
  const char* sgd = R"({"class_name": "SGD", "config": {"learning_rate": 0.05}})";
  struct Case {
    json spec;
    int64_t side, channels;
  };
  for (const Case& c : {Case{testing::seed_cnn_spec(), 28, 1}, Case{residual_spec(), 12, 3}}) {
    SCOPED_TRACE(c.spec["name"].get<std::string>());
    nn::Model on_gpu(c.spec, 3), on_cpu(c.spec, 3);
    const auto ctx = kernels::make_cuda_context(0);
    Trainer gpu(on_gpu, compiled(sgd), kernels::Exec{Device::cuda, 1, ctx.get()});
    Trainer cpu(on_cpu, compiled(sgd), kernels::Exec{Device::cpu, 1});
    const auto ds = random_images(64, c.side, c.channels, 8);
    data::Batch batch;
    const auto at = [&](int step) {
      batch.x = ds->x.rows(step * 8, step * 8 + 8);
      batch.y = ds->y.rows(step * 8, step * 8 + 8);
      batch.size = 8;
      return batch;
    };
    gpu.train_step(at(0));
    cpu.train_step(at(0));
    EXPECT_EQ(gpu.last_loss(), cpu.last_loss());
    const int64_t before = testing::emulated_copies();
    double cpu_losses = 0.0;
    for (int step = 1; step < 8; ++step) {
      gpu.train_step(at(step));
      cpu.train_step(at(step));
      cpu_losses += cpu.last_loss();
    }
    EXPECT_EQ(testing::emulated_copies() - before, 7 * 2) << "7 steps: x and y in, nothing out";
    EXPECT_EQ(gpu.last_loss(), cpu.last_loss());
    EXPECT_EQ(testing::emulated_copies() - before, 7 * 2 + 1) << "one copy brings 7 steps' values";
    EXPECT_TRUE(std::isfinite(cpu_losses));
    expect_same_variables(on_gpu, on_cpu);
  }
}

// An MLP with a Dense layer of every activation of the list, Activation
// layers and LeakyReLU: on the GPU the activations that read their input
// (swish, gelu) keep a pre-activation buffer of their own, which must live
// on the device and give the CPU's numbers to the bit.
json every_activation_spec() {
  json layers = json::array();
  for (const kernels::Activation a : kernels::kAllActivations)
    layers.push_back({{"class_name", "Dense"},
                      {"config", {{"units", 8}, {"activation", kernels::activation_name(a)}}}});
  layers.push_back({{"class_name", "Activation"}, {"config", {{"activation", "gelu"}}}});
  layers.push_back({{"class_name", "LeakyReLU"}, {"config", {{"negative_slope", 0.1}}}});
  layers.push_back({{"class_name", "Dense"}, {"config", {{"units", 10}}}});
  return json{{"name", "mlp"}, {"input_shape", {12}}, {"layers", layers}};
}

TEST(EmulatedGpu, EveryActivationTrainsAsOnTheCpuBitForBit) {
  expect_trains_as_on_the_cpu(every_activation_spec(), 4, uniform_examples(Shape{32, 12}, 5, 2.0f),
                              4);
}

// Token ids through Embedding and LayerNormalization train on the device as
// on the CPU; a bad id in a batch is refused with the layer's name on the
// host, before the batch is staged (the device's lookup never sees it).
TEST(EmulatedGpu, TokenModelTrainsAsOnTheCpuAndRefusesBadIds) {
  const json spec = json::parse(R"({"name": "tokens", "input_shape": [6], "layers": [
    {"class_name": "Embedding", "config": {"input_dim": 20, "output_dim": 4}},
    {"class_name": "LayerNormalization", "config": {}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  const char* adam = R"({"class_name": "Adam", "config": {"learning_rate": 0.01}})";
  nn::Model on_gpu(spec, 4), on_cpu(spec, 4);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(adam), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(adam), kernels::Exec{Device::cpu, 1});
  auto ds = std::make_shared<data::Dataset>();
  ds->x = Tensor(Shape{32, 6});
  ds->y = Tensor(Shape{32}, DType::i32);
  for (int64_t i = 0; i < ds->x.numel(); ++i) ds->x.f32()[i] = static_cast<float>(i * 7 % 20);
  for (int64_t i = 0; i < 32; ++i) ds->y.i32()[i] = static_cast<int32_t>(i % 10);
  data::Batch batch;
  for (int step = 0; step < 4; ++step) {
    batch.x = ds->x.rows(step * 8, step * 8 + 8);
    batch.y = ds->y.rows(step * 8, step * 8 + 8);
    batch.size = 8;
    EXPECT_EQ(step_loss(gpu, batch), step_loss(cpu, batch)) << "step " << step;
  }
  expect_same_variables(on_gpu, on_cpu);
  batch.x = ds->x.rows(0, 8).clone();
  batch.x.f32()[9] = 20.0f;
  for (Trainer* t : {&gpu, &cpu}) {
    try {
      t->train_step(batch);
      ADD_FAILURE() << "id 20 of input_dim 20 was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("Embedding 'embedding': token id 20 "),
                std::string::npos)
          << e.what();
    }
  }
}

// Causal self-attention with attention dropout: its projections, per-head
// products and dropout key live on the device, and its steps (the mask
// drawn there) give the CPU's numbers to the bit.
TEST(EmulatedGpu, AttentionTrainsAsOnTheCpuBitForBit) {
  const json spec = json::parse(R"({"name": "attend", "input_shape": [5, 4], "layers": [
    {"class_name": "MultiHeadAttention", "config": {"num_heads": 2, "key_dim": 3, "dropout": 0.2,
     "use_causal_mask": true}, "inbound": [-1, -1]},
    {"class_name": "Add", "config": {}, "inbound": [-1, 0]},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  expect_trains_as_on_the_cpu(spec, 6, uniform_examples(Shape{24, 5, 4}, 8), 3);
}

// The recurrent layers (their step ops, and the views and fills around the
// time loop) train on the GPU as on the CPU, bit for bit: an LSTM, a GRU of
// each form going backwards, a SimpleRNN.
TEST(EmulatedGpu, RecurrentLayersTrainAsOnTheCpuBitForBit) {
  const json spec = json::parse(R"({"name": "rnn", "input_shape": [6, 3], "layers": [
    {"class_name": "LSTM", "config": {"units": 5, "return_sequences": true}},
    {"class_name": "GRU", "config": {"units": 4, "return_sequences": true, "go_backwards": true}},
    {"class_name": "GRU", "config": {"units": 4, "return_sequences": true, "reset_after": false}},
    {"class_name": "SimpleRNN", "config": {"units": 3}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  expect_trains_as_on_the_cpu(spec, 6, uniform_examples(Shape{24, 6, 3}, 7), 3);
}

// A decoder's transposed convolutions (the convolution ops with the roles
// swapped, bias and activation on top) train on the GPU as on the CPU, bit
// for bit: 'same' after a stride-2 Conv2D, 'valid' with output_padding.
TEST(EmulatedGpu, TransposedConvolutionsTrainAsOnTheCpuBitForBit) {
  const json spec = json::parse(R"({"name": "decoder", "input_shape": [6, 6, 3], "layers": [
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 3, "strides": 2,
     "padding": "same", "activation": "relu"}},
    {"class_name": "Conv2DTranspose", "config": {"filters": 3, "kernel_size": 3, "strides": 2,
     "padding": "same", "activation": "relu"}},
    {"class_name": "Conv2DTranspose", "config": {"filters": 2, "kernel_size": 3, "strides": 2,
     "output_padding": 1, "activation": "gelu", "use_bias": false}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  expect_trains_as_on_the_cpu(spec, 6, uniform_examples(Shape{24, 6, 6, 3}, 9), 3);
}

// Under the mixed policies the transposed convolution's three products take
// narrow operands (the output's gradient among them, rounded once for the
// input and the kernel gradients): the losses of the same steps stay within
// a few per cent of float32's without equalling them, and the variables
// float32.
TEST(EmulatedGpu, TransposedConvolutionsTrainUnderMixedPrecision) {
  const json spec = json::parse(R"({"name": "decoder", "input_shape": [4, 4, 3], "layers": [
    {"class_name": "Conv2DTranspose", "config": {"filters": 4, "kernel_size": 3, "strides": 2,
     "padding": "same", "activation": "relu"}},
    {"class_name": "Conv2DTranspose", "config": {"filters": 2, "kernel_size": 2, "strides": 1}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  const Tensor x = uniform_examples(Shape{24, 4, 4, 3}, 10);
  Tensor y(Shape{24}, DType::i32);
  for (int64_t i = 0; i < 24; ++i) y.i32()[i] = static_cast<int32_t>(i % 10);
  const auto ctx = kernels::make_cuda_context(0);
  const char* policies[3] = {"float32", "mixed_float16", "mixed_bfloat16"};
  std::vector<double> losses[3];
  for (int p = 0; p < 3; ++p) {
    nn::Model model(spec, 7);
    CompileOptions c = compiled(R"({"class_name": "SGD", "config": {"learning_rate": 0.05}})");
    c.precision = policies[p];
    Trainer trainer(model, c, kernels::Exec{Device::cuda, 1, ctx.get()});
    data::Batch batch;
    for (int step = 0; step < 3; ++step) {
      batch.x = x.rows(step * 8, step * 8 + 8);
      batch.y = y.rows(step * 8, step * 8 + 8);
      batch.size = 8;
      losses[p].push_back(step_loss(trainer, batch));
    }
    for (const Param* v : model.params()) EXPECT_EQ(v->value.dtype(), DType::f32) << v->name;
  }
  for (int p = 1; p < 3; ++p) {
    EXPECT_NE(losses[p], losses[0]) << policies[p] << " computed as float32 does";
    for (int step = 0; step < 3; ++step)
      EXPECT_NEAR(losses[p][step], losses[0][step], 0.03 * losses[0][step])
          << policies[p] << " step " << step;
  }
}

// A MobileNet-like block (a depthwise convolution, batch norm and ReLU, a
// separable one with gelu): its kernels, GEMM and buffers live on the device
// and its steps give the CPU's numbers to the bit.
TEST(EmulatedGpu, DepthwiseAndSeparableConvolutionsTrainAsOnTheCpuBitForBit) {
  const json spec = json::parse(R"({"name": "mobile", "input_shape": [7, 6, 3], "layers": [
    {"class_name": "DepthwiseConv2D", "config": {"kernel_size": 3, "strides": 2,
     "padding": "same", "depth_multiplier": 2, "use_bias": false}},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "ReLU", "config": {}},
    {"class_name": "SeparableConv2D", "config": {"filters": 5, "kernel_size": 3,
     "padding": "same", "activation": "gelu"}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  expect_trains_as_on_the_cpu(spec, 6, uniform_examples(Shape{24, 7, 6, 3}, 9), 3);
}

// Bidirectional (its copies moved to the GPU with it, its time reversals
// strided copies there) trains on the GPU as on the CPU, bit for bit.
TEST(EmulatedGpu, BidirectionalTrainsAsOnTheCpuBitForBit) {
  const json spec = json::parse(R"({"name": "bi", "input_shape": [6, 3], "layers": [
    {"class_name": "Bidirectional", "config": {"layer": {"class_name": "LSTM",
     "config": {"units": 4, "return_sequences": true}}}},
    {"class_name": "Bidirectional", "config": {"merge_mode": "mul", "layer": {
     "class_name": "GRU", "config": {"units": 3}}}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  expect_trains_as_on_the_cpu(spec, 6, uniform_examples(Shape{24, 6, 3}, 7), 3);
}

// Recurrent states on the device: an encoder's final h and c (views of its
// state buffers) start a decoder, a Bidirectional GRU's states reach the
// loss, and the encoder's unused sequence gets the model's zero gradient.
TEST(EmulatedGpu, ReturnStateAndInitialStateTrainAsOnTheCpuBitForBit) {
  const json spec = json::parse(R"({"name": "seq2seq", "input_shape": [6, 3], "layers": [
    {"class_name": "LSTM", "config": {"units": 4, "return_state": true}, "inbound": [-1]},
    {"class_name": "LSTM", "config": {"units": 4, "return_sequences": true},
     "inbound": [-1, [0, 1], [0, 2]]},
    {"class_name": "Bidirectional", "config": {"layer": {"class_name": "GRU",
     "config": {"units": 3, "return_state": true}}}},
    {"class_name": "Concatenate", "config": {}, "inbound": [2, [2, 2], [0, 2]]},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  expect_trains_as_on_the_cpu(spec, 6, uniform_examples(Shape{24, 6, 3}, 7), 3);
}

// A GPU worker's optimizer (built, or restored, on the GPU) later given host
// copies of the variables by a host strategy keeps its state: two Adam steps
// split across the devices equal two on the CPU.
TEST(EmulatedGpu, OptimizerSlotsFollowTheirVariable) {
  const json adam = json::parse(R"({"class_name": "Adam", "config": {"learning_rate": 0.1}})");
  Param cpu_var{"dense/kernel", Tensor::zeros(Shape{4}), Tensor::zeros(Shape{4}), true};
  cpu_var.grad.fill(0.5f);
  Param gpu_var{cpu_var.name, cpu_var.value.to(Device::cuda), cpu_var.grad.to(Device::cuda), true};
  Param* on_cpu[1] = {&cpu_var};
  Param* on_gpu[1] = {&gpu_var};
  auto reference = optim::make_optimizer(adam), moved = optim::make_optimizer(adam);
  reference->apply(on_cpu);
  reference->apply(on_cpu);
  moved->apply(on_gpu);
  EXPECT_EQ(moved->state()[0].second->device(), Device::cuda);
  Param host_copy{gpu_var.name, gpu_var.value.to(Device::cpu), gpu_var.grad.to(Device::cpu), true};
  Param* on_host[1] = {&host_copy};
  moved->apply(on_host);
  EXPECT_EQ(moved->state()[0].second->device(), Device::cpu);
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(host_copy.value.f32()[k], cpu_var.value.f32()[k]);
  EXPECT_NE(cpu_var.value.f32()[0], 0.0f);
}

// Gradient accumulation on the GPU: the accumulators live on the device, the
// steps run without CUDA graphs (a batch that accumulates is another step
// than an update), and 3 cycles of 4 batches train as on the CPU, bit for bit.
TEST(EmulatedGpu, AccumulatedGradientsTrainAsOnTheCpuBitForBit) {
  const char* adam = R"({"class_name": "Adam",
                         "config": {"learning_rate": 0.01, "gradient_accumulation_steps": 4}})";
  nn::Model on_gpu(residual_spec(), 3), on_cpu(residual_spec(), 3);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(adam), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(adam), kernels::Exec{Device::cpu, 1});
  const auto ds = random_images(8 * 12, 12, 3, 5);
  data::Batch batch;
  for (int step = 0; step < 12; ++step) {
    batch.x = ds->x.rows(step * 8, step * 8 + 8);
    batch.y = ds->y.rows(step * 8, step * 8 + 8);
    batch.size = 8;
    EXPECT_EQ(step_loss(gpu, batch), step_loss(cpu, batch)) << "step " << step;
  }
  expect_same_variables(on_gpu, on_cpu);
  EXPECT_EQ(gpu.optimizer().updates(), 3);
  const auto accumulators = gpu.optimizer().accumulators();
  EXPECT_FALSE(accumulators.empty());
  for (const auto& [name, t] : accumulators) EXPECT_EQ(t->device(), Device::cuda) << name;
  ASSERT_NE(gpu.step_graphs(), nullptr);
  EXPECT_NE(gpu.step_graphs()->off().find("gradient_accumulation_steps"), std::string::npos);
}

// Loss scaling on the GPU: Adam in a LossScaleOptimizer, fed
// gradients 2^15 times larger (and more as the scale grows), moves the
// residual model exactly as Adam alone on the CPU.
TEST(EmulatedGpu, LossScaledStepsMatchUnscaledCpuStepsBitForBit) {
  const char* adam = R"({"class_name": "Adam", "config": {"learning_rate": 0.01}})";
  const std::string scaled = std::string(R"({"class_name": "LossScaleOptimizer", "config": {
      "inner_optimizer": )") +
                             adam + R"(, "dynamic_growth_steps": 2}})";
  nn::Model on_gpu(residual_spec(), 4), on_cpu(residual_spec(), 4);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(scaled.c_str()), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(adam), kernels::Exec{Device::cpu, 1});
  const auto ds = random_images(48, 12, 3, 5);
  data::Batch batch;
  for (int step = 0; step < 6; ++step) {
    batch.x = ds->x.rows(step * 8, step * 8 + 8);
    batch.y = ds->y.rows(step * 8, step * 8 + 8);
    batch.size = 8;
    EXPECT_EQ(step_loss(gpu, batch), step_loss(cpu, batch)) << "step " << step;
  }
  EXPECT_EQ(gpu.optimizer().loss_scale(), 32768.0f * 8);  // doubled after steps 2, 4 and 6
  EXPECT_EQ(gpu.optimizer().dynamic_loss_scale()->skipped(), 0);
  expect_same_variables(on_gpu, on_cpu);
}

// A forced overflow: the scale starts at 2^127, where the gradients of
// inputs this large overflow float32. It must back off, skipping those steps,
// until they fit, then grow again after each 2 finite steps and back off
// once more: the scale rises and falls around the largest that fits, and the
// model trains on.
TEST(EmulatedGpu, ForcedOverflowBacksOffAndRecovers) {
  const std::string opt = R"({"class_name": "LossScaleOptimizer", "config": {
      "inner_optimizer": {"class_name": "SGD", "config": {"learning_rate": 1e-9}},
      "initial_scale": 1.7014118346046923e38, "dynamic_growth_steps": 2}})";
  nn::Model model(testing::seed_cnn_spec(), 3);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(model, compiled(opt.c_str()), kernels::Exec{Device::cuda, 1, ctx.get()});
  auto ds = random_images(16, 28, 1, 9);
  for (float& v : ds->x.span_f32()) v *= 1e4f;
  data::Batch batch;
  batch.x = ds->x;
  batch.y = ds->y;
  batch.size = 16;
  std::vector<float> scales;
  for (int step = 0; step < 40; ++step) {
    EXPECT_TRUE(std::isfinite(step_loss(gpu, batch))) << "step " << step;
    scales.push_back(gpu.optimizer().loss_scale());
  }
  const auto* s = gpu.optimizer().dynamic_loss_scale();
  std::string trail;
  for (float v : scales) trail += std::to_string(static_cast<int>(std::log2(v))) + " ";
  EXPECT_LT(scales.front(), 0x1p127f) << trail;  // the first step overflowed
  int rises = 0, falls_after_a_rise = 0;
  for (size_t i = 1; i < scales.size(); ++i) {
    if (scales[i] > scales[i - 1]) ++rises;
    if (scales[i] < scales[i - 1] && rises > 0) ++falls_after_a_rise;
  }
  EXPECT_GE(rises, 2) << trail;
  EXPECT_GE(falls_after_a_rise, 2) << trail;
  EXPECT_GT(s->skipped(), 0);
  EXPECT_EQ(gpu.optimizer().iterations() + s->skipped(), 40);  // every step applied or skipped
  for (const Param* p : model.params()) {
    const Tensor v = p->value.to(Device::cpu);
    EXPECT_TRUE(std::ranges::all_of(v.span_f32(), [](float x) { return std::isfinite(x); }))
        << p->name;
  }
}

// The loss scale and its count are part of a checkpoint: a fit stopped at
// step 7 and resumed (a new trainer, as after a requeue) ends with the bits of
// an uninterrupted fit, though the scale moved on the way (it starts too
// large, backs off, grows every 3 steps and overflows again). summary.json
// says the scale and the skipped steps.
TEST(EmulatedGpu, LossScaleResumesFromACheckpointExactly) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("drun_loss_scale_" + std::to_string(std::random_device{}()));
  const char* opt = R"({"class_name": "LossScaleOptimizer", "config": {
      "inner_optimizer": {"class_name": "SGD", "config": {"learning_rate": 1e-9, "momentum": 0.9}},
      "initial_scale": 1.7014118346046923e38, "dynamic_growth_steps": 3}})";
  auto ds = random_images(64, 28, 1, 9);
  for (float& v : ds->x.span_f32()) v *= 1e4f;
  data::PipelineSpec spec;
  spec.batch_size = 8;
  Progress quiet(false, true);
  const auto ctx = kernels::make_cuda_context(0);
  const kernels::Exec ex{Device::cuda, 1, ctx.get()};
  FitConfig config;
  config.epochs = 2;
  config.save_checkpoints_steps = 7;

  nn::Model whole(testing::seed_cnn_spec(), 3);
  Trainer straight(whole, compiled(opt), ex);
  data::Pipeline input(ds, spec);
  config.model_dir = (dir / "straight").string();
  const FitResult done = straight.fit(input, nullptr, config, quiet);

  nn::Model resumed(testing::seed_cnn_spec(), 3);
  config.model_dir = (dir / "split").string();
  {
    Trainer first(resumed, compiled(opt), ex);
    data::Pipeline in(ds, spec);
    FitConfig stop = config;
    stop.max_steps = 7;
    first.fit(in, nullptr, stop, quiet);
  }
  Trainer second(resumed, compiled(opt), ex);
  ASSERT_TRUE(second.restore(config.model_dir, [](const std::string&) {}));
  data::Pipeline in(ds, spec);
  const FitResult again = second.fit(in, nullptr, config, quiet);

  EXPECT_EQ(again.global_step, 16);
  EXPECT_EQ(second.optimizer().loss_scale(), straight.optimizer().loss_scale());
  EXPECT_EQ(second.optimizer().iterations(), straight.optimizer().iterations());
  EXPECT_GT(done.loss_scale.value("skipped_steps", 0), 0);
  EXPECT_EQ(done.loss_scale.value("scale", 0.0f), straight.optimizer().loss_scale());
  const json summary = json::parse(std::ifstream(dir / "straight" / "summary.json"));
  EXPECT_EQ(summary["loss_scale"], done.loss_scale);
  expect_same_variables(resumed, whole);
  std::filesystem::remove_all(dir);
}

// Mixed precision on the emulated GPU: the seed CNN trained with
// each policy on a learnable problem (the label is which of 10 bands of the
// image is bright, under noise) reaches the float32 run's accuracy; its
// variables and optimizer state stay float32; mixed_float16 carries a loss
// scale. The GPU's own kernels are the backend harness's to check.
std::shared_ptr<data::Dataset> bright_bands(int64_t n, uint64_t seed) {
  auto ds = random_images(n, 28, 1, seed);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t label = ds->y.i32()[i];
    float* image = ds->x.f32() + i * 28 * 28;
    for (int64_t p = 0; p < 28 * 28; ++p) image[p] *= 0.5f;
    for (int64_t row = label * 2 + 4; row < label * 2 + 6; ++row)
      for (int64_t col = 0; col < 28; ++col) image[row * 28 + col] += 0.4f;
  }
  return ds;
}

TEST(EmulatedGpu, MixedPrecisionPoliciesTrainAsFloat32Does) {
  const auto train = bright_bands(256, 21), test = bright_bands(256, 22);
  data::PipelineSpec spec;
  spec.batch_size = 16;
  spec.shuffle = true;
  spec.seed = 4;
  FitConfig config;
  config.epochs = 2;
  Progress quiet(false, true);
  const auto ctx = kernels::make_cuda_context(0);
  const char* policies[3] = {"float32", "mixed_float16", "mixed_bfloat16"};
  double accuracy[3] = {0, 0, 0}, loss[3] = {0, 0, 0};
  std::vector<float> kernel[3];
  for (int i = 0; i < 3; ++i) {
    nn::Model model(testing::seed_cnn_spec(), 3);
    CompileOptions c = compiled(R"({"class_name": "SGD", "config": {"learning_rate": 0.05,
                                                                    "momentum": 0.9}})");
    c.precision = policies[i];
    Trainer trainer(model, c, kernels::Exec{Device::cuda, 1, ctx.get()});
    EXPECT_EQ(trainer.optimizer().dynamic_loss_scale() != nullptr, i == 1) << policies[i];
    data::Pipeline in(train, spec), eval(test, data::PipelineSpec{});
    loss[i] = trainer.fit(in, nullptr, config, quiet).train.loss;
    accuracy[i] = trainer.evaluate(eval).metrics.at(0).second;
    for (const Param* p : model.params()) EXPECT_EQ(p->value.dtype(), DType::f32) << p->name;
    for (const auto& [name, t] : trainer.optimizer().state())
      EXPECT_EQ(t->dtype(), DType::f32) << name;
    const Tensor k = model.params()[0]->value.to(Device::cpu);  // the first convolution's kernel
    kernel[i].assign(k.f32(), k.f32() + k.numel());
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(accuracy[i], 0.95) << policies[i];
    EXPECT_NEAR(loss[i], loss[0], 0.1 * loss[0] + 0.01) << policies[i];
  }
  // The narrow runs computed otherwise (their kernels differ from float32's
  // in the last bits) but not far: within 5 % of the kernel's size.
  for (int i = 1; i < 3; ++i) {
    double diff = 0, size = 0;
    for (size_t j = 0; j < kernel[0].size(); ++j) {
      diff += std::pow(kernel[i][j] - kernel[0][j], 2);
      size += std::pow(kernel[0][j], 2);
    }
    EXPECT_GT(diff, 0.0) << policies[i];
    EXPECT_LT(std::sqrt(diff / size), 0.05) << policies[i];
  }
}

// On the CPU a mixed policy is refused, naming the policy and the reason.
TEST(EmulatedGpu, MixedPrecisionIsRefusedOnTheCpu) {
  nn::Model model(testing::seed_cnn_spec(), 3);
  CompileOptions c = compiled(R"({"class_name": "SGD", "config": {}})");
  c.precision = "mixed_bfloat16";
  try {
    Trainer trainer(model, c, kernels::Exec{Device::cpu, 1});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'mixed_bfloat16' needs a GPU"), std::string::npos)
        << e.what();
  }
}

class EmulatedFit : public ::testing::TestWithParam<const char*> {};

TEST_P(EmulatedFit, ResidualModelFitsEvaluatesAndCheckpointsAsOnTheCpu) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("drun_emulated_" + std::to_string(std::random_device{}()));
  const auto ds = random_images(96, 12, 3, 11);
  data::PipelineSpec spec;
  spec.batch_size = 16;
  spec.shuffle = true;
  spec.seed = 3;
  FitConfig config;
  config.epochs = 2;
  config.save_checkpoints_steps = 4;
  Progress quiet(false, true);

  FitResult results[2];
  std::unique_ptr<nn::Model> models[2];
  Tensor predictions[2];
  const auto ctx = kernels::make_cuda_context(0);
  for (int run = 0; run < 2; ++run) {  // 0: the emulated GPU, 1: the CPU
    models[run] = std::make_unique<nn::Model>(residual_spec(), 9);
    const kernels::Exec ex =
        run == 0 ? kernels::Exec{Device::cuda, 1, ctx.get()} : kernels::Exec{Device::cpu, 1};
    Trainer trainer(*models[run], compiled(GetParam()), ex);
    data::Pipeline train(ds, spec), eval(ds, spec);
    config.model_dir = (dir / std::to_string(run)).string();
    results[run] = trainer.fit(train, &eval, config, quiet);
    data::Pipeline in_order(ds, data::PipelineSpec{});
    predictions[run] = trainer.predict(in_order);
  }
  EXPECT_EQ(results[0].global_step, 12);
  EXPECT_EQ(results[0].train.loss, results[1].train.loss);
  ASSERT_TRUE(results[0].eval && results[1].eval);
  EXPECT_EQ(results[0].eval->loss, results[1].eval->loss);
  EXPECT_EQ(results[0].eval->metrics, results[1].eval->metrics);
  expect_same_variables(*models[0], *models[1]);
  ASSERT_EQ(predictions[0].device(), Device::cpu);
  for (int64_t k = 0; k < predictions[1].numel(); ++k)
    ASSERT_EQ(predictions[0].f32()[k], predictions[1].f32()[k]) << "prediction " << k;

  // The GPU run's last checkpoint, loaded into a CPU model, is the CPU run's model.
  nn::Model restored(residual_spec(), 1);
  const auto opt = optim::make_optimizer(json::parse(GetParam()));
  const TrainingState state = Checkpoints((dir / "0").string(), 5).load(12, restored, *opt);
  EXPECT_EQ(state.global_step, 12);
  auto r = restored.params(), c = models[1]->params();
  for (size_t i = 0; i < r.size(); ++i)
    for (int64_t k = 0; k < r[i]->value.numel(); ++k)
      ASSERT_EQ(r[i]->value.f32()[k], c[i]->value.f32()[k]) << r[i]->name << " element " << k;
  std::filesystem::remove_all(dir);
}

// Keeps each epoch's weights, as a callback sees them (host copies).
class WeightsAtEpochEnd final : public Callback {
 public:
  std::string name() const override { return "WeightsAtEpochEnd"; }
  void epoch_end(int64_t, const Logs&, CallbackControl& c) override { seen.push_back(c.weights()); }
  std::vector<std::vector<Tensor>> seen;
};

// Callbacks on the emulated GPU decide as on the CPU: ReduceLROnPlateau's
// rates reach the device's steps, EarlyStopping stops after the same
// epoch and restores the best epoch's device weights, all to the bit.
TEST(EmulatedGpu, CallbacksDecideAsOnTheCpuBitForBit) {
  const auto ds = random_images(48, 12, 3, 13);
  data::PipelineSpec spec;
  spec.batch_size = 16;
  Progress quiet(false, true);
  const auto ctx = kernels::make_cuda_context(0);
  const char* sgd = R"({"class_name": "SGD", "config": {"learning_rate": 0.05}})";
  std::unique_ptr<nn::Model> models[2];
  WeightsAtEpochEnd seen[2];
  FitResult results[2];
  for (int run = 0; run < 2; ++run) {  // 0: the emulated GPU, 1: the CPU
    models[run] = std::make_unique<nn::Model>(residual_spec(), 9);
    const kernels::Exec ex =
        run == 0 ? kernels::Exec{Device::cuda, 1, ctx.get()} : kernels::Exec{Device::cpu, 1};
    Trainer trainer(*models[run], compiled(sgd), ex);
    data::Pipeline train(ds, spec), eval(ds, spec);
    auto early = make_callback(
        "EarlyStopping", {{"patience", 2}, {"min_delta", 1000.0}, {"restore_best_weights", true}});
    auto plateau = make_callback("ReduceLROnPlateau",
                                 {{"patience", 1}, {"factor", 0.5}, {"min_delta", 1000.0}});
    FitConfig config;
    config.epochs = 10;
    config.callbacks = {&seen[run], plateau.get(), early.get()};
    results[run] = trainer.fit(train, &eval, config, quiet);
    EXPECT_EQ(trainer.optimizer().current_lr(), 0.0125f);
  }
  EXPECT_EQ(results[0].epochs, 3);
  EXPECT_EQ(results[1].epochs, 3);
  ASSERT_EQ(seen[0].seen.size(), 3u);
  ASSERT_EQ(seen[1].seen.size(), 3u);
  for (size_t e = 0; e < 3; ++e)
    for (size_t i = 0; i < seen[0].seen[e].size(); ++i)
      for (int64_t k = 0; k < seen[0].seen[e][i].numel(); ++k)
        ASSERT_EQ(seen[0].seen[e][i].f32()[k], seen[1].seen[e][i].f32()[k])
            << "epoch " << e << " variable " << i << " element " << k;
  // Restored: epoch 0's weights, on the device.
  expect_same_variables(*models[0], *models[1]);
  const auto params = models[0]->params();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor v = params[i]->value.to(Device::cpu);
    for (int64_t k = 0; k < v.numel(); ++k)
      ASSERT_EQ(v.f32()[k], seen[0].seen[0][i].f32()[k]) << params[i]->name << " element " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Optimizers, EmulatedFit,
    ::testing::Values(R"({"class_name": "Adam", "config": {"amsgrad": true}})",
                      R"({"class_name": "RMSprop", "config": {"momentum": 0.5, "centered": true}})",
                      R"({"class_name": "Adagrad", "config": {"weight_decay": 0.01}})"),
    [](const auto& info) { return std::to_string(info.index); });

}  // namespace
}  // namespace drun::train

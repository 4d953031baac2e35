// The runtime's GPU plumbing on the emulated GPU (emulated_gpu.cpp), in CI:
// the same model trained with Exec{cuda} and with Exec{cpu} must give the
// same numbers to the bit (the emulated ops are the CPU's, one thread each),
// every variable, gradient and optimizer slot must live on the device, and
// fit()'s checkpoints, evaluation and prediction must read them back. A
// tensor that stayed on the host, or a host reader of device memory, fails
// the dispatcher's device check or these comparisons.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>

#include "base/rng.hpp"
#include "data/pipeline.hpp"
#include "nn/model.hpp"
#include "seed_cnn.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

namespace drun::train {
namespace {

CompileOptions compiled(const char* optimizer) {
  CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer = json::parse(optimizer);
  c.metrics = {"accuracy"};
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
    EXPECT_EQ(gpu.train_step(batch), cpu.train_step(batch)) << "step " << step;
  }
  expect_same_variables(on_gpu, on_cpu);
  const auto slots = gpu.optimizer().state();
  ASSERT_EQ(slots.size(), 6u);  // a momentum per variable
  for (const auto& [name, t] : slots) EXPECT_EQ(t->device(), Device::cuda) << name;
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
  const char* adam = R"({"class_name": "Adam", "config": {"learning_rate": 0.01}})";
  nn::Model on_gpu(every_activation_spec(), 4), on_cpu(every_activation_spec(), 4);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(adam), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(adam), kernels::Exec{Device::cpu, 1});
  auto ds = std::make_shared<data::Dataset>();
  Rng rng(5);
  ds->x = Tensor(Shape{32, 12});
  ds->y = Tensor(Shape{32}, DType::i32);
  for (float& v : ds->x.span_f32()) v = rng.uniform(-2.0f, 2.0f);
  for (int64_t i = 0; i < 32; ++i) ds->y.i32()[i] = static_cast<int32_t>(i % 10);
  data::Batch batch;
  for (int step = 0; step < 4; ++step) {
    batch.x = ds->x.rows(step * 8, step * 8 + 8);
    batch.y = ds->y.rows(step * 8, step * 8 + 8);
    batch.size = 8;
    const double g = gpu.train_step(batch), c = cpu.train_step(batch);
    EXPECT_EQ(g, c) << "step " << step;
    EXPECT_TRUE(std::isfinite(c)) << "step " << step;
  }
  expect_same_variables(on_gpu, on_cpu);
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

INSTANTIATE_TEST_SUITE_P(
    Optimizers, EmulatedFit,
    ::testing::Values(R"({"class_name": "Adam", "config": {"amsgrad": true}})",
                      R"({"class_name": "RMSprop", "config": {"momentum": 0.5, "centered": true}})",
                      R"({"class_name": "Adagrad", "config": {"weight_decay": 0.01}})"),
    [](const auto& info) { return std::to_string(info.index); });

}  // namespace
}  // namespace drun::train

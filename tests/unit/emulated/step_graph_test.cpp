// CUDA graphs (train/step_graph.hpp) on the emulated GPU: a captured step is
// recorded op by op with its arguments and replayed as recorded, so a step
// that passed anything changing from step to step as an argument (the
// learning rate, Adam's bias correction, the row its loss goes to) would
// train differently from the CPU here, as it would on a GPU.
#include "train/step_graph.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/rng.hpp"
#include "data/pipeline.hpp"
#include "kernels/ops.hpp"
#include "nn/model.hpp"
#include "seed_cnn.hpp"
#include "train/trainer.hpp"

namespace drun::train {
namespace {

CompileOptions compiled(const std::string& optimizer, bool graphs = true,
                        const std::string& precision = "float32") {
  CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer = json::parse(optimizer);
  c.metrics = {"accuracy", "sparse_top_k_categorical_accuracy"};  // a sum and a counted metric
  c.cuda_graphs = graphs;
  c.precision = precision;
  return c;
}

std::shared_ptr<data::Dataset> random_images(int64_t n, int64_t side, uint64_t seed) {
  auto ds = std::make_shared<data::Dataset>();
  Rng rng(seed);
  ds->x = Tensor(Shape{n, side, side, 1});
  ds->y = Tensor(Shape{n}, DType::i32);
  for (float& v : ds->x.span_f32()) v = rng.uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i)
    ds->y.i32()[i] = static_cast<int32_t>(rng.uniform(0.0f, 10.0f)) % 10;
  return ds;
}

data::Batch rows(const data::Dataset& ds, int64_t from, int64_t to) {
  data::Batch b;
  b.x = ds.x.rows(from, to);
  b.y = ds.y.rows(from, to);
  b.size = to - from;
  return b;
}

// Adam (its rate changes every step with the bias correction) on a schedule
// that decays every step; full batches from both stager buffers, a smaller
// last batch, and the model run at a larger batch in between (its buffers
// grow: the graphs' memory moved, so they are captured again).
TEST(StepGraphs, ReplayedStepsTrainAsTheCpuBitForBit) {
  const std::string adam = R"({"class_name": "Adam", "config": {"learning_rate":
      {"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.01,
       "decay_steps": 1, "decay_rate": 0.9}}}})";
  nn::Model on_gpu(testing::seed_cnn_spec(), 3), on_cpu(testing::seed_cnn_spec(), 3);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(adam), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(adam), kernels::Exec{Device::cpu, 1});
  const auto ds = random_images(128, 28, 11);
  const auto both = [&](const data::Batch& b, const std::string& what) {
    gpu.train_step(b);
    cpu.train_step(b);
    EXPECT_EQ(gpu.last_loss(), cpu.last_loss()) << what;
  };
  for (int step = 0; step < 8; ++step)
    both(rows(*ds, step * 8, step * 8 + 8), "step " + std::to_string(step));
  ASSERT_NE(gpu.step_graphs(), nullptr);
  EXPECT_EQ(gpu.step_graphs()->off(), "");
  // Each stager buffer warms up twice, is captured, and is launched from then on.
  EXPECT_EQ(gpu.step_graphs()->captures(), 2);
  EXPECT_EQ(gpu.step_graphs()->graph_launches(), 4);

  both(rows(*ds, 64, 69), "a smaller batch");
  const Tensor larger = ds->x.rows(0, 32).to(Device::cuda);
  on_gpu.forward(larger, false);  // grows every layer's buffers
  for (int step = 0; step < 6; ++step)
    both(rows(*ds, 72 + step * 8, 80 + step * 8),
         "after the larger batch, step " + std::to_string(step));
  EXPECT_EQ(gpu.step_graphs()->captures(), 4) << "both buffers captured again";
  EXPECT_EQ(gpu.optimizer().iterations(), cpu.optimizer().iterations());
  for (size_t i = 0; i < on_gpu.params().size(); ++i) {
    const Tensor g = on_gpu.params()[i]->value.to(Device::cpu);
    const Tensor& c = on_cpu.params()[i]->value;
    for (int64_t k = 0; k < g.numel(); ++k)
      ASSERT_EQ(g.f32()[k], c.f32()[k]) << on_gpu.params()[i]->name << " element " << k;
  }
  EXPECT_EQ(cpu.step_graphs(), nullptr) << "no graphs on the CPU";
}

TEST(StepGraphs, OffWhereTheCompileOptionSaysSo) {
  const std::string sgd = R"({"class_name": "SGD", "config": {"learning_rate": 0.05}})";
  const auto ctx = kernels::make_cuda_context(0);
  const kernels::Exec ex{Device::cuda, 1, ctx.get()};
  const auto ds = random_images(8, 28, 3);
  nn::Model model(testing::seed_cnn_spec(), 3);
  Trainer t(model, compiled(sgd, false), ex);
  for (int i = 0; i < 6; ++i) t.train_step(rows(*ds, 0, 8));
  EXPECT_EQ(t.step_graphs()->off(), "compile{cuda_graphs = false}");
  EXPECT_EQ(t.step_graphs()->captures(), 0);
}

// Under a loss scale (mixed_float16 adds one) a graph's step reads the scale
// from the device, checks its gradients there and skips its own update where
// one overflowed; the host reads the check after the step. The scale starts
// far too large (inputs of 1e4 overflow it), backs off, and grows again every
// 2 finite steps until it overflows once more, so steps are skipped and the
// scale moves while the graphs replay, as on the CPU, bit for bit.
TEST(StepGraphs, LossScaledStepsSkipAndRescaleInAGraphAsOnTheCpu) {
  const std::string scaled = R"({"class_name": "LossScaleOptimizer", "config": {
      "inner_optimizer": {"class_name": "Adam", "config": {"learning_rate": 1e-3}},
      "initial_scale": 1.7014118346046923e38, "dynamic_growth_steps": 2}})";
  nn::Model on_gpu(testing::seed_cnn_spec(), 3), on_cpu(testing::seed_cnn_spec(), 3);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(scaled), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(scaled), kernels::Exec{Device::cpu, 1});
  auto ds = random_images(16, 28, 9);
  for (float& v : ds->x.span_f32()) v *= 1e4f;
  int64_t skipped_in_graphs = 0;
  for (int step = 0; step < 40; ++step) {
    const int64_t launches = gpu.step_graphs() ? gpu.step_graphs()->graph_launches() : 0;
    const int64_t skipped = gpu.optimizer().dynamic_loss_scale()->skipped();
    gpu.train_step(rows(*ds, step % 2 * 8, step % 2 * 8 + 8));
    cpu.train_step(rows(*ds, step % 2 * 8, step % 2 * 8 + 8));
    if (gpu.step_graphs()->graph_launches() > launches)
      skipped_in_graphs += gpu.optimizer().dynamic_loss_scale()->skipped() - skipped;
    ASSERT_EQ(gpu.last_loss(), cpu.last_loss()) << "step " << step;
    ASSERT_EQ(gpu.optimizer().loss_scale(), cpu.optimizer().loss_scale()) << "step " << step;
  }
  EXPECT_EQ(gpu.step_graphs()->off(), "");
  EXPECT_EQ(gpu.step_graphs()->captures(), 2);
  EXPECT_EQ(gpu.step_graphs()->graph_launches(), 36);
  EXPECT_GT(skipped_in_graphs, 2);
  EXPECT_EQ(gpu.optimizer().dynamic_loss_scale()->skipped(),
            cpu.optimizer().dynamic_loss_scale()->skipped());
  EXPECT_EQ(gpu.optimizer().iterations(), cpu.optimizer().iterations());
  EXPECT_LT(gpu.optimizer().iterations(), 40);
  for (size_t i = 0; i < on_gpu.params().size(); ++i) {
    const Tensor g = on_gpu.params()[i]->value.to(Device::cpu);
    const Tensor& c = on_cpu.params()[i]->value;
    for (int64_t k = 0; k < g.numel(); ++k)
      ASSERT_EQ(g.f32()[k], c.f32()[k]) << on_gpu.params()[i]->name << " element " << k;
  }
}

// mixed_float16 with a loss scale of 2^40 at first: its float16 gradients
// overflow, so steps are skipped while the graphs replay, and the scale
// moves as in the same steps kernel by kernel, bit for bit.
TEST(StepGraphs, MixedFloat16StepsInAGraphAsKernelByKernel) {
  const std::string scaled = R"({"class_name": "LossScaleOptimizer", "config": {
      "inner_optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.01, "momentum": 0.9}},
      "initial_scale": 1099511627776, "dynamic_growth_steps": 2}})";
  nn::Model graphed(testing::seed_cnn_spec(), 3), plain(testing::seed_cnn_spec(), 3);
  const auto ctx = kernels::make_cuda_context(0);
  const kernels::Exec ex{Device::cuda, 1, ctx.get()};
  Trainer with(graphed, compiled(scaled, true, "mixed_float16"), ex);
  Trainer without(plain, compiled(scaled, false, "mixed_float16"), ex);
  const auto ds = random_images(16, 28, 5);
  for (int step = 0; step < 30; ++step) {
    with.train_step(rows(*ds, step % 2 * 8, step % 2 * 8 + 8));
    without.train_step(rows(*ds, step % 2 * 8, step % 2 * 8 + 8));
    ASSERT_EQ(with.last_loss(), without.last_loss()) << "step " << step;
    ASSERT_EQ(with.optimizer().loss_scale(), without.optimizer().loss_scale()) << "step " << step;
  }
  EXPECT_EQ(with.step_graphs()->graph_launches(), 26);
  const auto* s = with.optimizer().dynamic_loss_scale();
  EXPECT_GT(s->skipped(), 2);
  EXPECT_LT(s->scale(), 1099511627776.0f);
  EXPECT_EQ(s->skipped(), without.optimizer().dynamic_loss_scale()->skipped());
  for (size_t i = 0; i < graphed.params().size(); ++i) {
    const Tensor g = graphed.params()[i]->value.to(Device::cpu);
    const Tensor p = plain.params()[i]->value.to(Device::cpu);
    for (int64_t k = 0; k < g.numel(); ++k)
      ASSERT_EQ(g.f32()[k], p.f32()[k]) << graphed.params()[i]->name << " element " << k;
  }
}

// Dropout draws a new mask every step inside a graph too: its key goes to
// the device before the step (Layer::begin_training_step), and the captured
// forward reads it from there.
TEST(StepGraphs, DropoutDrawsEachStepsMaskInAGraph) {
  const std::string sgd = R"({"class_name": "SGD", "config": {"learning_rate": 0.1}})";
  const json spec = json::parse(R"({"name": "dropout", "input_shape": [12, 12, 1], "layers": [
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 32, "activation": "relu"}},
    {"class_name": "Dropout", "config": {"rate": 0.5}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
  nn::Model on_gpu(spec, 3), on_cpu(spec, 3);
  const auto ctx = kernels::make_cuda_context(0);
  Trainer gpu(on_gpu, compiled(sgd), kernels::Exec{Device::cuda, 1, ctx.get()});
  Trainer cpu(on_cpu, compiled(sgd), kernels::Exec{Device::cpu, 1});
  const auto ds = random_images(80, 12, 4);
  for (int step = 0; step < 10; ++step) {
    gpu.train_step(rows(*ds, step * 8, step * 8 + 8));
    cpu.train_step(rows(*ds, step * 8, step * 8 + 8));
    EXPECT_EQ(gpu.last_loss(), cpu.last_loss()) << "step " << step;
  }
  EXPECT_EQ(gpu.step_graphs()->off(), "");
  EXPECT_EQ(gpu.step_graphs()->captures(), 2);
  EXPECT_EQ(gpu.step_graphs()->graph_launches(), 6);
  for (size_t i = 0; i < on_gpu.params().size(); ++i) {
    const Tensor g = on_gpu.params()[i]->value.to(Device::cpu);
    const Tensor& c = on_cpu.params()[i]->value;
    for (int64_t k = 0; k < g.numel(); ++k)
      ASSERT_EQ(g.f32()[k], c.f32()[k]) << on_gpu.params()[i]->name << " element " << k;
  }
}

// A "step" of one tensor on the emulated GPU, all ones, and its graphs.
struct OneTensorStep {
  std::shared_ptr<kernels::cuda::Context> ctx = kernels::make_cuda_context(0);
  kernels::Exec ex{Device::cuda, 1, ctx.get()};
  Tensor t = Tensor::zeros(Shape{4}).to(Device::cuda);
  StepGraphs graphs{ex, ""};
  StepGraphs::Input input{t.raw(), t.raw(), 4, 4};
  OneTensorStep() { kernels::fill(ex, 1.0f, t); }
};

// A step that reads a value back in its middle cannot be captured: the step
// still runs once, kernel by kernel, and graphs stay off with the reason.
TEST(StepGraphs, AFailedCaptureRunsTheStepAndSaysWhy) {
  OneTensorStep s;
  const kernels::Exec& ex = s.ex;
  Tensor& t = s.t;
  StepGraphs& graphs = s.graphs;
  float seen = 0.0f;
  const auto step = [&] {
    kernels::scale(ex, 2.0f, t);
    seen = t.to(Device::cpu).f32()[0];
  };
  for (int i = 0; i < 4; ++i) graphs.run(s.input, step);
  EXPECT_EQ(seen, 16.0f) << "four steps, each doubling once";
  EXPECT_EQ(graphs.captures(), 0);
  EXPECT_NE(graphs.off().find("the step could not be captured (a blocking copy"), std::string::npos)
      << graphs.off();
}

// A graph is launched while its memory stays put; a tensor allocated or freed
// since makes it warm up and be captured again.
TEST(StepGraphs, AGraphWhoseMemoryMovedIsCapturedAgain) {
  OneTensorStep s;
  const kernels::Exec& ex = s.ex;
  Tensor& t = s.t;
  StepGraphs& graphs = s.graphs;
  const auto step = [&] { kernels::scale(ex, 2.0f, t); };
  for (int i = 0; i < 4; ++i) graphs.run(s.input, step);  // 2 warm, captured, launched
  EXPECT_EQ(graphs.captures(), 1);
  EXPECT_EQ(graphs.graph_launches(), 2);
  { const Tensor moved = Tensor::zeros(Shape{8}).to(Device::cuda); }
  for (int i = 0; i < 4; ++i) graphs.run(s.input, step);  // 2 warm again, captured, launched
  EXPECT_EQ(graphs.captures(), 2);
  EXPECT_EQ(graphs.graph_launches(), 4);
  EXPECT_EQ(t.to(Device::cpu).f32()[3], 256.0f) << "eight steps, each doubling once";
}

}  // namespace
}  // namespace drun::train

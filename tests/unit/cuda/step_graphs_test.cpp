// CUDA graphs on a real GPU: the seed CNN's steps are captured
// (one graph per stager buffer, after two warm runs each) and train as the
// same steps launched kernel by kernel. Adam on a decaying schedule, so a
// rate frozen into the graph would show; and under mixed_float16 with a loss
// scale that overflows, backs off and grows again while the graphs replay.
// Exits 77 (skipped) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "base/rng.hpp"
#include "data/pipeline.hpp"
#include "kernels/cuda/device.hpp"
#include "nn/model.hpp"
#include "seed_cnn.hpp"
#include "train/trainer.hpp"

namespace drun::train {
namespace {

const char* kAdam = R"({"class_name": "Adam", "config": {"learning_rate":
    {"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.003,
     "decay_steps": 1, "decay_rate": 0.95}}}})";

CompileOptions compiled(bool graphs, const std::string& optimizer = kAdam,
                        const std::string& precision = "float32") {
  CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer = json::parse(optimizer);
  c.metrics = {"accuracy"};
  c.cuda_graphs = graphs;
  c.precision = precision;
  return c;
}

data::Batch rows(const Tensor& x, const Tensor& y, int64_t from, int64_t to) {
  data::Batch b;
  b.x = x.rows(from, to);
  b.y = y.rows(from, to);
  b.size = to - from;
  return b;
}

TEST(StepGraphsOnTheGpu, CapturedStepsTrainAsKernelByKernel) {
  const int64_t batch = 64, steps = 24;
  Rng rng(3);
  Tensor x(Shape{batch * steps, 28, 28, 1});
  Tensor y(Shape{batch * steps}, DType::i32);
  for (float& v : x.span_f32()) v = rng.uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < y.numel(); ++i) y.i32()[i] = static_cast<int32_t>(i % 10);

  nn::Model graphed(testing::seed_cnn_spec(), 5), plain(testing::seed_cnn_spec(), 5);
  const auto ctx = kernels::make_cuda_context(0);
  const kernels::Exec ex{Device::cuda, 1, ctx.get()};
  Trainer with(graphed, compiled(true), ex), without(plain, compiled(false), ex);
  for (int64_t s = 0; s < steps; ++s) {
    const data::Batch b = rows(x, y, s * batch, (s + 1) * batch);
    with.train_step(b);
    without.train_step(b);
    const double a = with.last_loss(), c = without.last_loss();
    EXPECT_NEAR(a, c, 1e-4 * std::max(1.0, std::abs(c))) << "step " << s;
  }
  ASSERT_NE(with.step_graphs(), nullptr);
  EXPECT_EQ(with.step_graphs()->off(), "");
  // Two graphs (one per stager buffer) after two warm runs each; the other
  // trainer's first allocations may make one of them be captured again.
  EXPECT_GE(with.step_graphs()->captures(), 2);
  EXPECT_GE(with.step_graphs()->graph_launches(), steps - 8);
  EXPECT_EQ(without.step_graphs()->off(), "compile{cuda_graphs = false}");
  for (size_t i = 0; i < graphed.params().size(); ++i) {
    const Tensor g = graphed.params()[i]->value.to(Device::cpu);
    const Tensor p = plain.params()[i]->value.to(Device::cpu);
    for (int64_t k = 0; k < g.numel(); ++k)
      ASSERT_NEAR(g.f32()[k], p.f32()[k], 1e-4f) << graphed.params()[i]->name << " element " << k;
  }
}

// mixed_float16 whose loss scale starts at 2^40: float16 gradients overflow
// there, so steps are skipped and the scale halves until they fit, then
// doubles after every 2 finite steps and overflows again, while the graphs
// replay. The graphed trainer's scale must move as the unrecorded one's.
TEST(StepGraphsOnTheGpu, LossScaledMixedStepsSkipAndRescaleAsKernelByKernel) {
  const std::string scaled = std::string(R"({"class_name": "LossScaleOptimizer", "config": {
      "inner_optimizer": )") +
                             kAdam +
                             R"(, "initial_scale": 1099511627776, "dynamic_growth_steps": 2}})";
  const int64_t batch = 64, steps = 30;
  Rng rng(4);
  Tensor x(Shape{batch * 2, 28, 28, 1});
  Tensor y(Shape{batch * 2}, DType::i32);
  for (float& v : x.span_f32()) v = rng.uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < y.numel(); ++i) y.i32()[i] = static_cast<int32_t>(i % 10);
  nn::Model graphed(testing::seed_cnn_spec(), 6), plain(testing::seed_cnn_spec(), 6);
  const auto ctx = kernels::make_cuda_context(0);
  const kernels::Exec ex{Device::cuda, 1, ctx.get()};
  Trainer with(graphed, compiled(true, scaled, "mixed_float16"), ex);
  Trainer without(plain, compiled(false, scaled, "mixed_float16"), ex);
  for (int64_t s = 0; s < steps; ++s) {
    const data::Batch b = rows(x, y, s % 2 * batch, (s % 2 + 1) * batch);
    with.train_step(b);
    without.train_step(b);
    EXPECT_EQ(with.optimizer().loss_scale(), without.optimizer().loss_scale()) << "step " << s;
    const double a = with.last_loss(), c = without.last_loss();
    EXPECT_NEAR(a, c, 1e-3 * std::max(1.0, std::abs(c))) << "step " << s;
  }
  EXPECT_EQ(with.step_graphs()->off(), "");
  EXPECT_GE(with.step_graphs()->graph_launches(), steps - 8);
  const auto* s = with.optimizer().dynamic_loss_scale();
  EXPECT_GT(s->skipped(), 2);
  EXPECT_LT(s->scale(), 1099511627776.0f);
  EXPECT_EQ(s->skipped(), without.optimizer().dynamic_loss_scale()->skipped());
  EXPECT_EQ(with.optimizer().iterations(), without.optimizer().iterations());
}

}  // namespace
}  // namespace drun::train

int main(int argc, char** argv) {
  if (drun::kernels::cuda::device_count() == 0) {
    std::printf("skipped: %s; CUDA graphs were built but cannot run here\n",
                drun::kernels::cuda::no_device_reason().c_str());
    return 77;  // meson's "skipped"
  }
  std::printf("GPU: %s\n", drun::kernels::cuda::device_name(0).c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

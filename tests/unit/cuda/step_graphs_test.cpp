// CUDA graphs on a real GPU (issue 18): the seed CNN's steps are captured
// (one graph per stager buffer, after two warm runs each) and train as the
// same steps launched kernel by kernel. Adam on a decaying schedule, so a
// rate frozen into the graph would show. Exits 77 (skipped) without a GPU.
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

CompileOptions compiled(bool graphs) {
  CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer = json::parse(R"({"class_name": "Adam", "config": {"learning_rate":
      {"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.003,
       "decay_steps": 1, "decay_rate": 0.95}}}})");
  c.metrics = {"accuracy"};
  c.cuda_graphs = graphs;
  return c;
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
  data::Batch b;
  for (int64_t s = 0; s < steps; ++s) {
    b.x = x.rows(s * batch, (s + 1) * batch);
    b.y = y.rows(s * batch, (s + 1) * batch);
    b.size = batch;
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

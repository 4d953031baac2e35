// HostStaged gives a host strategy (parameter servers, Hogwild, EASGD) copies
// of a worker's variables and carries values and gradients across. Here the
// "device" variables are host tensors too (CI has no GPU), which still checks
// what it promises: the inner strategy works on tensors of its own, sees this
// step's gradients, keeps its own values of the trainable variables (others
// may write them, as Hogwild's workers do), and what it leaves comes back.
#include "distributed/host_staged.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace drun::distributed {
namespace {

// Sets every variable to 7 in setup (the chief's values) and, in apply, adds
// the gradient to the value (SGD with rate -1), remembering what it was given.
class Recorder final : public Strategy {
 public:
  std::string name() const override { return "Recorder"; }
  int workers() const override { return 2; }
  int worker_index() const override { return 1; }
  float gradient_scale() const override { return 0.5f; }
  bool lockstep() const override { return true; }
  void setup(std::span<Param* const> params) override {
    for (Param* p : params) {
      p->value.fill(7.0f);
      seen.push_back(p);
    }
  }
  void apply(optim::Optimizer&, std::span<Param* const> params) override {
    for (Param* p : params)
      if (p->trainable)
        for (int64_t i = 0; i < p->value.numel(); ++i) p->value.f32()[i] += p->grad.f32()[i];
    ++applied;
  }
  void sum(double*, int64_t) override {}
  std::optional<int64_t> shared_global_step(std::span<Param* const> params) override {
    params[0]->value.fill(-1.0f);  // the servers' newest values
    return 42;
  }
  std::vector<Param*> seen;
  int applied = 0;
};

Param variable(const std::string& name, float value, bool trainable) {
  Param p;
  p.name = name;
  p.trainable = trainable;
  p.value = Tensor::zeros(Shape{3});
  p.value.fill(value);
  if (trainable) p.grad = Tensor::zeros(Shape{3});
  return p;
}

TEST(HostStaged, InnerStrategyWorksOnCopiesAndItsResultsComeBack) {
  Param kernel = variable("dense/kernel", 1.0f, true);
  Param moving = variable("bn/moving_mean", 2.0f, false);
  std::vector<Param*> params{&kernel, &moving};
  Recorder inner;
  HostStaged staged(inner);
  EXPECT_EQ(staged.name(), "Recorder");
  EXPECT_EQ(staged.worker_index(), 1);
  EXPECT_FLOAT_EQ(staged.gradient_scale(), 0.5f);
  EXPECT_TRUE(staged.lockstep());

  staged.setup(params);
  ASSERT_EQ(inner.seen.size(), 2u);
  EXPECT_NE(inner.seen[0]->value.raw(), kernel.value.raw()) << "the strategy gets its own copy";
  EXPECT_FLOAT_EQ(kernel.value.f32()[2], 7.0f) << "setup's values come back";
  EXPECT_FLOAT_EQ(moving.value.f32()[0], 7.0f);

  // A step: backward wrote gradients, the forward moved a statistic.
  kernel.grad.fill(0.25f);
  moving.value.fill(3.0f);
  const auto sgd = optim::make_optimizer(json::parse(R"({"class_name": "SGD"})"));
  staged.apply(*sgd, params);
  EXPECT_EQ(inner.applied, 1);
  EXPECT_FLOAT_EQ(kernel.value.f32()[0], 7.25f) << "this step's gradient reached the strategy";
  EXPECT_FLOAT_EQ(moving.value.f32()[1], 3.0f) << "the worker's own statistic survives the step";

  // Another worker writes the strategy's (shared) values: the next step
  // starts from them, not from this worker's copy.
  inner.seen[0]->value.fill(100.0f);
  staged.apply(*sgd, params);
  EXPECT_FLOAT_EQ(kernel.value.f32()[0], 100.25f) << "the strategy's values are the truth";

  EXPECT_EQ(staged.shared_global_step(params), std::optional<int64_t>(42));
  EXPECT_FLOAT_EQ(kernel.value.f32()[1], -1.0f) << "fetched values come back";
}

}  // namespace
}  // namespace drun::distributed

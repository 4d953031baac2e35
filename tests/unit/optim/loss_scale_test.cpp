// Dynamic loss scaling (optim/loss_scale.hpp) and Keras' LossScaleOptimizer
// around each optimizer: the scale's halving and doubling, the update skipped
// on a NaN or an infinity, and, without an overflow, the same bits as the
// optimizer alone fed the unscaled gradients.
#include "optim/loss_scale.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "optim/optimizer.hpp"

namespace drun::optim {
namespace {

TEST(DynamicLossScale, HalvesOnOverflowAndDoublesAfterGrowthSteps) {
  DynamicLossScale s(1024.0f, 3);
  s.update(false);
  EXPECT_EQ(s.scale(), 512.0f);
  s.update(true);
  s.update(true);
  EXPECT_EQ(s.scale(), 512.0f);
  EXPECT_EQ(s.counter(), 2);
  s.update(false);  // an overflow resets the count
  EXPECT_EQ(s.scale(), 256.0f);
  EXPECT_EQ(s.counter(), 0);
  for (int i = 0; i < 3; ++i) s.update(true);
  EXPECT_EQ(s.scale(), 512.0f);
  EXPECT_EQ(s.counter(), 0);
  EXPECT_EQ(s.skipped(), 2);
}

TEST(DynamicLossScale, StaysWithinOneAndTheLargestPowerOfTwo) {
  DynamicLossScale low(2.0f, 1);
  for (int i = 0; i < 5; ++i) low.update(false);
  EXPECT_EQ(low.scale(), 1.0f);
  DynamicLossScale high(0x1p126f, 1);
  high.update(true);
  EXPECT_EQ(high.scale(), 0x1p126f);
  EXPECT_TRUE(std::isfinite(high.scale()));
}

TEST(DynamicLossScale, RefusesWhatIsNotAPowerOfTwoAtLeastOne) {
  for (float bad : {0.0f, 0.5f, 3.0f, -4.0f, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()})
    EXPECT_THROW(DynamicLossScale(bad, 10), UsageError) << bad;
  EXPECT_THROW(DynamicLossScale(8.0f, 0), UsageError);
  DynamicLossScale s(8.0f, 10);
  EXPECT_THROW(s.restore(6.0f, 0), UsageError);
  EXPECT_THROW(s.restore(8.0f, -1), UsageError);
  s.restore(64.0f, 7);
  EXPECT_EQ(s.scale(), 64.0f);
  EXPECT_EQ(s.counter(), 7);
}

json wrapped(const json& inner, float initial, int64_t growth) {
  return {
      {"class_name", "LossScaleOptimizer"},
      {"config",
       {{"inner_optimizer", inner}, {"initial_scale", initial}, {"dynamic_growth_steps", growth}}}};
}

TEST(LossScaleOptimizer, ConfigRoundTripsAndBadOnesAreRefused) {
  const json adam = {{"class_name", "Adam"}, {"config", {{"learning_rate", 0.01}}}};
  auto opt = make_optimizer(wrapped(adam, 256.0f, 50));
  ASSERT_NE(opt->dynamic_loss_scale(), nullptr);
  EXPECT_EQ(opt->class_name(), "Adam");
  EXPECT_EQ(opt->loss_scale(), 256.0f);
  const json config = opt->config();
  EXPECT_EQ(config["class_name"], "LossScaleOptimizer");
  EXPECT_EQ(config["config"]["dynamic_growth_steps"], 50);
  EXPECT_EQ(config["config"]["inner_optimizer"]["class_name"], "Adam");
  EXPECT_EQ(opt->clone_fresh()->config(), config);
  // Keras' defaults.
  auto defaults = make_optimizer(
      {{"class_name", "LossScaleOptimizer"}, {"config", {{"inner_optimizer", "sgd"}}}});
  EXPECT_EQ(defaults->loss_scale(), 32768.0f);
  EXPECT_EQ(defaults->dynamic_loss_scale()->growth_steps(), 2000);
  EXPECT_EQ(make_optimizer("sgd")->loss_scale(), 1.0f);
  EXPECT_THROW(make_optimizer({{"class_name", "LossScaleOptimizer"}, {"config", json::object()}}),
               UsageError);
  EXPECT_THROW(make_optimizer(wrapped(wrapped(adam, 8.0f, 1), 8.0f, 1)), UsageError);
  EXPECT_THROW(make_optimizer(wrapped(adam, 1000.0f, 1)), UsageError);
  json unknown = wrapped(adam, 8.0f, 1);
  unknown["config"]["dynamic"] = true;
  EXPECT_THROW(make_optimizer(unknown), UsageError);
}

struct Vars {
  Param kernel, bias;
  Vars() {
    kernel.name = "dense/kernel";
    bias.name = "dense/bias";
    for (Param* p : {&kernel, &bias}) {
      p->value = Tensor(Shape{5});
      p->grad = Tensor(Shape{5});
      for (int64_t i = 0; i < 5; ++i) p->value.f32()[i] = 0.1f * static_cast<float>(i) - 0.2f;
    }
  }
  std::vector<Param*> all() { return {&kernel, &bias}; }
  // Gradients of step `t`, times `factor`.
  void set_grads(int t, float factor) {
    for (Param* p : all())
      for (int64_t i = 0; i < 5; ++i)
        p->grad.f32()[i] = factor * (0.3f * static_cast<float>(i + t) - 0.5f) / 7.0f;
  }
};

// Each optimizer, wrapped, fed gradients times its scale, gives the bits
// of the optimizer alone fed the gradients (the scale is a power of two).
TEST(LossScaleOptimizer, UnscaledUpdatesEqualTheInnerOptimizersBitForBit) {
  for (const char* name : {"SGD", "Adam", "Adagrad", "RMSprop"}) {
    const json inner = {{"class_name", name}, {"config", {{"learning_rate", 0.05}}}};
    auto plain = make_optimizer(inner);
    auto scaled = make_optimizer(wrapped(inner, 1024.0f, 2));  // the scale grows on the way
    Vars a, b;
    for (int t = 0; t < 7; ++t) {
      a.set_grads(t, 1.0f);
      plain->apply(a.all());
      b.set_grads(t, scaled->loss_scale());
      scaled->apply(b.all());
    }
    EXPECT_EQ(scaled->loss_scale(), 8192.0f) << name;  // 1024 doubled after steps 2, 4 and 6
    EXPECT_EQ(scaled->iterations(), plain->iterations()) << name;
    for (int64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(b.kernel.value.f32()[i], a.kernel.value.f32()[i]) << name << " " << i;
      EXPECT_EQ(b.bias.value.f32()[i], a.bias.value.f32()[i]) << name << " " << i;
    }
  }
}

TEST(LossScaleOptimizer, AnOverflowSkipsTheWholeUpdate) {
  const json sgd = {{"class_name", "SGD"}, {"config", {{"momentum", 0.9}}}};
  for (float bad :
       {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    auto opt = make_optimizer(wrapped(sgd, 64.0f, 100));
    Vars v;
    v.set_grads(0, 64.0f);
    opt->apply(v.all());
    const Tensor kernel = v.kernel.value.clone(), bias = v.bias.value.clone();
    const auto momentum = opt->state()[0].second->clone();
    v.set_grads(1, 64.0f);
    v.bias.grad.f32()[3] = bad;  // one value of the second variable
    opt->apply(v.all());
    EXPECT_EQ(opt->iterations(), 1);
    EXPECT_EQ(opt->loss_scale(), 32.0f);
    EXPECT_EQ(opt->dynamic_loss_scale()->skipped(), 1);
    for (int64_t i = 0; i < 5; ++i) {  // neither variable nor slot moved
      EXPECT_EQ(v.kernel.value.f32()[i], kernel.f32()[i]);
      EXPECT_EQ(v.bias.value.f32()[i], bias.f32()[i]);
      EXPECT_EQ(opt->state()[0].second->f32()[i], momentum.f32()[i]);
    }
  }
}

}  // namespace
}  // namespace drun::optim

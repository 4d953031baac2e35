// Losses and metrics against plain double-precision formulas.
#include "nn/loss.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "gradient_checker.hpp"
#include "nn/metrics.hpp"

namespace drun::nn {
namespace {

const kernels::Exec ex;

Tensor labels(std::initializer_list<int32_t> v) {
  Tensor t(Shape{static_cast<int64_t>(v.size())}, DType::i32);
  int i = 0;
  for (int32_t x : v) t.i32()[i++] = x;
  return t;
}

TEST(Loss, SparseSoftmaxCrossEntropyMatchesFormula) {
  Rng rng(2);
  Tensor z = testing::random_tensor(Shape{3, 4}, rng, -3.0f, 3.0f), g;
  Tensor y = labels({1, 3, 0});
  Loss loss(json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})"));
  const double got = loss.compute(ex, z, y, g);
  double want = 0.0;
  for (int r = 0; r < 3; ++r) {
    double sum = 0.0;
    for (int j = 0; j < 4; ++j) sum += std::exp(static_cast<double>(z.f32()[r * 4 + j]));
    for (int j = 0; j < 4; ++j) {
      const double p = std::exp(static_cast<double>(z.f32()[r * 4 + j])) / sum;
      EXPECT_NEAR(g.f32()[r * 4 + j], (p - (j == y.i32()[r])) / 3.0, 1e-6);
    }
    want += std::log(sum) - z.f32()[r * 4 + y.i32()[r]];
  }
  EXPECT_NEAR(got, want / 3.0, 1e-6);
}

// Every loss's gradient against finite differences of its value.
TEST(Loss, GradientsMatchFiniteDifferences) {
  Rng rng(4);
  const char* specs[] = {
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})",
      R"("sparse_categorical_crossentropy")",
      R"({"class_name": "CategoricalCrossentropy", "config": {"from_logits": true}})",
      R"("categorical_crossentropy")",
      R"({"class_name": "BinaryCrossentropy", "config": {"from_logits": true}})",
      R"("binary_crossentropy")",
      R"("mse")"};
  for (const char* s : specs) {
    SCOPED_TRACE(s);
    Loss loss(json::parse(s));
    Tensor pred = testing::random_tensor(Shape{4, 3}, rng, 0.1f, 0.9f);
    if (!loss.from_logits() && loss.class_name() != "MeanSquaredError" &&
        loss.class_name() != "BinaryCrossentropy")
      for (int r = 0; r < 4; ++r) {  // rows of probabilities summing to 1
        float sum = 0;
        for (int j = 0; j < 3; ++j) sum += pred.f32()[r * 3 + j];
        for (int j = 0; j < 3; ++j) pred.f32()[r * 3 + j] /= sum;
      }
    Tensor target =
        loss.sparse() ? labels({0, 2, 1, 2}) : testing::random_tensor(Shape{4, 3}, rng, 0.0f, 1.0f);
    Tensor g;
    loss.compute(ex, pred, target, g);
    Tensor analytic = g.clone();
    const float h = 1e-3f;
    for (int64_t i = 0; i < pred.numel(); ++i) {
      const float saved = pred.f32()[i];
      pred.f32()[i] = saved + h;
      const double up = loss.compute(ex, pred, target, g);
      pred.f32()[i] = saved - h;
      const double down = loss.compute(ex, pred, target, g);
      pred.f32()[i] = saved;
      EXPECT_NEAR(analytic.f32()[i], (up - down) / (2 * h), 2e-3) << i;
    }
  }
}

TEST(Loss, BadLabelsAndUnknownLossAreNamed) {
  Loss loss(json("sparse_categorical_crossentropy"));
  Tensor p(Shape{2, 3}), g;
  p.fill(0.3f);
  try {
    loss.compute(ex, p, labels({1, 7}), g);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("label 7 of example 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(loss.compute(ex, p, labels({1, 2, 0}), g), UsageError);
  EXPECT_THROW(Loss(json("hinge")), UsageError);
  EXPECT_THROW(
      Loss(json::parse(R"({"class_name": "MeanSquaredError", "config": {"from_logits": true}})")),
      UsageError);
}

TEST(Metrics, AccuracyMseMae) {
  Tensor z(Shape{3, 2});
  const float v[] = {0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f};
  std::copy(v, v + 6, z.f32());
  Metric acc("accuracy", true);
  acc.update(ex, z, labels({1, 1, 1}));
  EXPECT_DOUBLE_EQ(acc.result(), 2.0 / 3.0);
  Tensor t(Shape{3, 2});
  t.fill(0.5f);
  Metric mse("mse", false), mae("mae", false);
  mse.update(ex, z, t);
  mae.update(ex, z, t);
  double se = 0, ae = 0;
  for (float x : v) se += (x - 0.5) * (x - 0.5), ae += std::fabs(x - 0.5);
  EXPECT_NEAR(mse.result(), se / 6, 1e-7);
  EXPECT_NEAR(mae.result(), ae / 6, 1e-7);
  EXPECT_THROW(Metric("f1", false), UsageError);
}

}  // namespace
}  // namespace drun::nn

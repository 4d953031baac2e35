// Losses and metrics against plain double-precision formulas.
#include "nn/loss.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gradient_checker.hpp"
#include "loss_value.hpp"
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
  const double got = testing::loss_value(loss, ex, z, y, g);
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
      R"("mse")",
      R"({"class_name": "SparseCategoricalCrossentropy",
          "config": {"from_logits": true, "label_smoothing": 0.2}})",
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"label_smoothing": 0.2}})",
      R"({"class_name": "CategoricalCrossentropy",
          "config": {"from_logits": true, "label_smoothing": 0.3}})",
      R"({"class_name": "CategoricalCrossentropy", "config": {"label_smoothing": 0.3}})",
      R"({"class_name": "BinaryCrossentropy",
          "config": {"from_logits": true, "label_smoothing": 0.1}})"};
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
    testing::loss_value(loss, ex, pred, target, g);
    Tensor analytic = g.clone();
    const float h = 1e-3f;
    for (int64_t i = 0; i < pred.numel(); ++i) {
      const float saved = pred.f32()[i];
      pred.f32()[i] = saved + h;
      const double up = testing::loss_value(loss, ex, pred, target, g);
      pred.f32()[i] = saved - h;
      const double down = testing::loss_value(loss, ex, pred, target, g);
      pred.f32()[i] = saved;
      EXPECT_NEAR(analytic.f32()[i], (up - down) / (2 * h), 2e-3) << i;
    }
  }
}

// Keras' label smoothing: targets (1 - s) t + s / classes, and for integer
// labels the same on their one-hot rows.
TEST(Loss, LabelSmoothingMatchesTheFormula) {
  Rng rng(6);
  const float s = 0.25f;
  const Tensor z = testing::random_tensor(Shape{3, 4}, rng, -3.0f, 3.0f);
  const Tensor y = labels({1, 3, 0});
  Tensor onehot(Shape{3, 4});
  onehot.fill(0.f);
  for (int r = 0; r < 3; ++r) onehot.f32()[r * 4 + y.i32()[r]] = 1.f;
  double want = 0.0;
  std::vector<double> want_grad;
  for (int r = 0; r < 3; ++r) {
    double sum = 0.0;
    for (int j = 0; j < 4; ++j) sum += std::exp(static_cast<double>(z.f32()[r * 4 + j]));
    for (int j = 0; j < 4; ++j) {
      const double t = (1.0 - s) * onehot.f32()[r * 4 + j] + s / 4.0;
      const double p = std::exp(static_cast<double>(z.f32()[r * 4 + j])) / sum;
      want -= t * std::log(p);
      want_grad.push_back((p - t) / 3.0);
    }
  }
  want /= 3.0;
  for (const bool sparse : {false, true}) {
    SCOPED_TRACE(sparse ? "sparse" : "one-hot");
    Loss loss(
        json{{"class_name", sparse ? "SparseCategoricalCrossentropy" : "CategoricalCrossentropy"},
             {"config", {{"from_logits", true}, {"label_smoothing", s}}}});
    Tensor g;
    EXPECT_NEAR(testing::loss_value(loss, ex, z, sparse ? y : onehot, g), want, 1e-6);
    for (int64_t i = 0; i < 12; ++i) EXPECT_NEAR(g.f32()[i], want_grad[i], 1e-6) << i;
    EXPECT_FLOAT_EQ(loss.config()["config"]["label_smoothing"].get<float>(), s);
  }
}

TEST(Loss, LabelSmoothingOutsideZeroToOneAndOnMseAreErrors) {
  for (const double bad : {-0.1, 1.5}) {
    try {
      Loss(json{{"class_name", "CategoricalCrossentropy"}, {"config", {{"label_smoothing", bad}}}});
      FAIL() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("CategoricalCrossentropy: label_smoothing"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(
      Loss(json{{"class_name", "MeanSquaredError"}, {"config", {{"label_smoothing", 0.1}}}}),
      UsageError);
}

TEST(Loss, BadLabelsAndUnknownLossAreNamed) {
  Loss loss(json("sparse_categorical_crossentropy"));
  Tensor p(Shape{2, 3}), g;
  p.fill(0.3f);
  try {
    loss.check(p.shape(), labels({1, 7}));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("label 7 of example 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(loss.check(p.shape(), labels({1, 2, 0})), UsageError);
  EXPECT_THROW(loss.check(p.shape(), labels({1, -1})), UsageError);
  loss.check(p.shape(), labels({1, 2}));
  EXPECT_THROW(Loss(json("hinge")), UsageError);
  EXPECT_THROW(
      Loss(json::parse(R"({"class_name": "MeanSquaredError", "config": {"from_logits": true}})")),
      UsageError);
}

// A metric's batch sum and what it counts.
double measured(const Metric& m, const Tensor& pred, const Tensor& target) {
  Tensor sum(Shape{1});
  m.measure(ex, pred, target, sum);
  return sum.f32()[0] / static_cast<double>(m.count(pred.shape()));
}

TEST(Metrics, AccuracyMseMae) {
  Tensor z(Shape{3, 2});
  const float v[] = {0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f};
  std::copy(v, v + 6, z.f32());
  Metric acc("accuracy", true);
  EXPECT_DOUBLE_EQ(measured(acc, z, labels({1, 1, 1})), 2.0 / 3.0);
  Tensor t(Shape{3, 2});
  t.fill(0.5f);
  Metric mse("mse", false), mae("mae", false);
  double se = 0, ae = 0;
  for (float x : v) se += (x - 0.5) * (x - 0.5), ae += std::fabs(x - 0.5);
  EXPECT_NEAR(measured(mse, z, t), se / 6, 1e-7);
  EXPECT_NEAR(measured(mae, z, t), ae / 6, 1e-7);
  // One-hot targets, and binary ones on one column (logits: threshold 0).
  Tensor onehot = Tensor::zeros(Shape{3, 2});
  onehot.f32()[1] = onehot.f32()[3] = onehot.f32()[4] = 1.0f;  // classes 1, 1, 0
  EXPECT_DOUBLE_EQ(measured(acc, z, onehot), 1.0 / 3.0);
  Tensor scores(Shape{3, 1}), truth(Shape{3, 1});
  const float sv[] = {-1.0f, 2.0f, 0.5f}, tv[] = {0.0f, 1.0f, 0.0f};
  std::copy(sv, sv + 3, scores.f32());
  std::copy(tv, tv + 3, truth.f32());
  EXPECT_DOUBLE_EQ(measured(acc, scores, truth), 2.0 / 3.0);
  EXPECT_THROW(Metric("f1", false), UsageError);
  EXPECT_THROW(measured(acc, z, labels({1, 1})), UsageError);
  EXPECT_THROW(measured(mse, z, labels({1, 1, 1})), UsageError);
}

// A sequence model's output (batch 2, 3 steps, 4 classes) against (2, 3)
// labels: Keras averages the loss and the accuracy over all 6 (example, step)
// pairs. The expected values are numpy's, in float64, on the same logits.
TEST(Loss, SparseCrossEntropyAndAccuracyAverageOverEveryStep) {
  Tensor z(Shape{2, 3, 4});
  for (int i = 0; i < 24; ++i) z.f32()[i] = static_cast<float>(std::sin(1.3 * i) * 2);
  Tensor y = labels({1, 3, 1, 2, 0, 0}).reshaped(Shape{2, 3});
  Tensor probs(Shape{2, 3, 4}), g;
  for (int r = 0; r < 6; ++r) {
    double sum = 0.0;
    for (int j = 0; j < 4; ++j) sum += std::exp(static_cast<double>(z.f32()[r * 4 + j]));
    for (int j = 0; j < 4; ++j)
      probs.f32()[r * 4 + j] = static_cast<float>(std::exp(z.f32()[r * 4 + j]) / sum);
  }
  Loss logits(json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})"));
  logits.check(z.shape(), y);
  EXPECT_NEAR(testing::loss_value(logits, ex, z, y, g), 1.648150136586229, 1e-5);
  ASSERT_EQ(g.shape(), z.shape());
  const double g12[] = {-0.09365022, 0.08311487, 0.00837866, 0.0021567};  // example 1, step 2
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(g.f32()[(1 * 3 + 2) * 4 + j], g12[j], 1e-6);
  Loss on_probs(json("sparse_categorical_crossentropy"));
  EXPECT_NEAR(testing::loss_value(on_probs, ex, probs, y, g), 1.648150136586229, 1e-5);
  Metric acc("accuracy", true);
  EXPECT_EQ(acc.count(z.shape()), 6);
  EXPECT_DOUBLE_EQ(measured(acc, z, y), 2.0 / 6.0);  // argmax: (0, 0) and (1, 1) hit
  // A label past the classes is named with its example and step.
  Tensor bad = labels({1, 3, 1, 2, 4, 0}).reshaped(Shape{2, 3});
  try {
    logits.check(z.shape(), bad);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("label 4 of example 1 (step 1)"), std::string::npos)
        << e.what();
  }
  // One label per example is not enough for a sequence.
  EXPECT_THROW(logits.check(z.shape(), labels({1, 2})), UsageError);
  EXPECT_THROW(measured(acc, z, labels({1, 2})), UsageError);
}

}  // namespace
}  // namespace drun::nn

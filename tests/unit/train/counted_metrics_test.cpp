// Top-k, precision, recall, AUC and F1 (nn/counted_metric.hpp) through the
// running values: small cases worked by hand, bad targets and options, and
// the reduction over workers, which must give one process's value exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "nn/metrics.hpp"
#include "train/running_values.hpp"

namespace drun::train {
namespace {

const kernels::Exec kCpu{Device::cpu, 1};

Tensor values(const Shape& shape, const std::vector<float>& v) {
  Tensor t(shape);
  std::copy(v.begin(), v.end(), t.f32());
  return t;
}

json described(const std::string& class_name, const json& config) {
  return {{"class_name", class_name}, {"config", config}};
}

// The metrics of `specs` over the batches (pred, target), as one process
// reports them.
MetricValues measured(const json& specs, const Shape& output,
                      const std::vector<std::pair<Tensor, Tensor>>& batches) {
  RunningValues v(nn::make_metrics(specs, false, output), Device::cpu);
  for (const auto& [pred, target] : batches) {
    v.loss_slot().f32()[0] = 0.0f;
    v.add_step(kCpu, pred, target, pred.dim(0));
  }
  return v.metrics();
}

double value_of(const MetricValues& values, const std::string& name) {
  for (const auto& [k, v] : values)
    if (k == name) return v;
  ADD_FAILURE() << "no metric " << name;
  return -1.0;
}

TEST(CountedMetrics, SmallCasesByHand) {
  // Four outputs against 0/1 targets: above 0.5 are 0.9 (positive), 0.6
  // (negative); the positives are 0.9 and 0.2.
  const Tensor pred = values(Shape{4, 1}, {0.9f, 0.6f, 0.2f, 0.1f});
  const Tensor target = values(Shape{4, 1}, {1.0f, 0.0f, 1.0f, 0.0f});
  const MetricValues r =
      measured(json{"precision", "recall",
                    described("Precision", {{"thresholds", {0.05, 0.95}}, {"name", "p2"}}),
                    described("AUC", {{"name", "pr_auc"}, {"curve", "PR"}})},
               Shape{1}, {{pred, target}});
  EXPECT_DOUBLE_EQ(value_of(r, "precision"), 0.5);
  EXPECT_DOUBLE_EQ(value_of(r, "recall"), 0.5);
  EXPECT_DOUBLE_EQ(value_of(r, "p2_0"), 0.5);  // everything is above 0.05
  EXPECT_DOUBLE_EQ(value_of(r, "p2_1"), 0.0);  // nothing above 0.95: 0, not NaN
  EXPECT_GT(value_of(r, "pr_auc"), 0.5);

  // A perfect ranking has an area of 1 under the ROC curve; a reversed one 0.
  const Tensor ranked = values(Shape{4, 1}, {0.9f, 0.8f, 0.3f, 0.1f});
  const Tensor truth = values(Shape{4, 1}, {1.0f, 1.0f, 0.0f, 0.0f});
  const Tensor reversed = values(Shape{4, 1}, {0.0f, 0.0f, 1.0f, 1.0f});
  EXPECT_DOUBLE_EQ(value_of(measured(json{"auc"}, Shape{1}, {{ranked, truth}}), "auc"), 1.0);
  EXPECT_DOUBLE_EQ(value_of(measured(json{"auc"}, Shape{1}, {{ranked, reversed}}), "auc"), 0.0);

  // Top-2 of three classes: the label's output has at most one above it.
  const Tensor scores = values(Shape{3, 3}, {0.1f, 0.5f, 0.4f, 0.7f, 0.2f, 0.1f, 0.3f, 0.3f, 0.4f});
  Tensor labels(Shape{3}, DType::i32);
  const int32_t want[] = {2, 2, 0};  // second, third, tied second
  std::copy(want, want + 3, labels.i32());
  const MetricValues top =
      measured(json{described("SparseTopKCategoricalAccuracy", {{"k", 2}, {"name", "top2"}}),
                    "sparse_top_k_categorical_accuracy"},
               Shape{3}, {{scores, labels}});
  EXPECT_DOUBLE_EQ(value_of(top, "top2"), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(value_of(top, "sparse_top_k_categorical_accuracy"), 1.0);

  // F1 per class at each row's maximum: class 0 is predicted twice, right
  // once; class 1 once, right; class 2 never, its one positive missed.
  const Tensor probs = values(Shape{3, 3}, {0.6f, 0.3f, 0.1f, 0.5f, 0.1f, 0.4f, 0.2f, 0.7f, 0.1f});
  const Tensor onehot = values(Shape{3, 3}, {1, 0, 0, 0, 0, 1, 0, 1, 0});
  const MetricValues f1 =
      measured(json{"f1_score", described("F1Score", {{"average", "macro"}, {"name", "macro"}})},
               Shape{3}, {{probs, onehot}});
  EXPECT_NEAR(value_of(f1, "f1_score_0"), 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(value_of(f1, "f1_score_1"), 1.0, 1e-6);
  EXPECT_NEAR(value_of(f1, "f1_score_2"), 0.0, 1e-6);
  EXPECT_NEAR(value_of(f1, "macro"), 5.0 / 9.0, 1e-6);
}

TEST(CountedMetrics, BadOptionsAndTargetsAreUsageErrors) {
  const auto message = [](const auto& f) {
    try {
      f();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no UsageError");
  };
  EXPECT_NE(message([] {
              nn::Metric(described("AUC", {{"curve", "XY"}}), false);
            }).find("'XY'"),
            std::string::npos);
  EXPECT_NE(message([] {
              nn::Metric(described("Precision", {{"thresholds", 1.5}}), false);
            }).find("1.5"),
            std::string::npos);
  EXPECT_NE(message([] {
              nn::Metric("f1_score", false, Shape{4, 3});
            }).find("(4, 3)"),
            std::string::npos);
  EXPECT_NE(message([] {
              nn::make_metrics(json{"auc", "AUC"}, false, Shape{1});
            }).find("'auc'"),
            std::string::npos);
  const nn::Metric auc("auc", false, Shape{2});
  Tensor counts(Shape{auc.width()});
  Tensor labels(Shape{3}, DType::i32);
  EXPECT_NE(message([&] {
              auc.measure(kCpu, Tensor(Shape{3, 2}), labels, counts);
            }).find("auc"),
            std::string::npos);
}

// Three batches of 8 rows over 5 classes measured by one process, and the
// same batches split in halves between two workers whose sums add up as
// Trainer::sum_over_workers adds them: every metric is equal, exactly.
TEST(CountedMetrics, TwoWorkersReportExactlyWhatOneReports) {
  const json specs = {
      "precision",
      "recall",
      "auc",
      "top_k_categorical_accuracy",
      "f1_score",
      described("Precision", {{"thresholds", {0.1, 0.3, 0.6}}, {"name", "p3"}}),
      described("AUC", {{"curve", "PR"}, {"name", "pr_auc"}}),
      described("AUC", {{"summation_method", "minoring"}, {"name", "auc_min"}}),
      described("F1Score", {{"average", "weighted"}, {"threshold", 0.2}, {"name", "f1_w"}}),
      described("F1Score", {{"average", "micro"}, {"name", "f1_micro"}}),
      described("TopKCategoricalAccuracy", {{"k", 2}, {"name", "top2"}})};
  const Shape output{5};
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (int b = 0; b < 3; ++b) {
    Tensor pred(Shape{8, 5}), target = Tensor::zeros(Shape{8, 5});
    for (int64_t i = 0; i < pred.numel(); ++i) pred.f32()[i] = u(gen);
    for (int64_t r = 0; r < 8; ++r) target.f32()[r * 5 + static_cast<int64_t>(u(gen) * 5)] = 1.0f;
    batches.emplace_back(std::move(pred), std::move(target));
  }
  const MetricValues one = measured(specs, output, batches);

  RunningValues first(nn::make_metrics(specs, false, output), Device::cpu);
  RunningValues second(nn::make_metrics(specs, false, output), Device::cpu);
  for (const auto& [pred, target] : batches)
    for (RunningValues* w : {&first, &second}) {
      const int64_t from = w == &first ? 0 : 3;  // uneven halves: 3 and 5 rows
      const int64_t to = w == &first ? 3 : 8;
      w->loss_slot().f32()[0] = 0.0f;
      w->add_step(kCpu, pred.rows(from, to), target.rows(from, to), to - from);
    }
  std::vector<double> sums = first.sums();
  const std::vector<double> theirs = second.sums();
  ASSERT_EQ(sums.size(), theirs.size());
  for (size_t i = 0; i < sums.size(); ++i) sums[i] += theirs[i];
  first.set_sums(sums);
  const MetricValues two = first.metrics();

  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(one.size(), 4u + 5u + 3u + 2u + 2u + 1u);  // f1_score: one per class
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].first, two[i].first);
    EXPECT_EQ(one[i].second, two[i].second) << one[i].first;
  }
}

}  // namespace
}  // namespace drun::train

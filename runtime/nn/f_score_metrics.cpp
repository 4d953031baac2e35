// Keras' F1Score (keras/src/metrics/f_score_metrics.py): per class sums of
// true positives, false positives, false negatives and targets, counted on
// the device; F1 per class, or averaged, from the totals.
#include "nn/metrics.hpp"

namespace drun::nn {

namespace {

constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon()

enum class Average { none, micro, macro, weighted };

class F1 final : public CountedMetric {
 public:
  F1(int64_t classes, Average average, std::optional<float> threshold)
      : classes_(classes), average_(average), threshold_(threshold) {}
  int64_t width() const override { return 4 * classes_; }
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& counts,
               const std::string& who) const override {
    check_dense_targets(pred, target, who);
    if (pred.rank() != 2 || pred.dim(-1) != classes_)
      throw UsageError("metric '" + who + "': predictions " + pred.shape().str() +
                       " are not (batch, " + std::to_string(classes_) + ")");
    kernels::class_counts(ex, threshold_, pred, target, counts);
  }
  void finish(const double* totals, int64_t, const std::string& name,
              NamedValues& out) const override {
    const int64_t c = classes_;
    if (average_ == Average::micro) {
      double tp = 0, fp = 0, fn = 0;
      for (int64_t j = 0; j < c; ++j) tp += totals[j], fp += totals[c + j], fn += totals[2 * c + j];
      out.emplace_back(name, f1(tp, fp, fn));
      return;
    }
    double weights = 0.0;
    for (int64_t j = 0; j < c; ++j) weights += totals[3 * c + j];
    double sum = 0.0;
    for (int64_t j = 0; j < c; ++j) {
      const double score = f1(totals[j], totals[c + j], totals[2 * c + j]);
      if (average_ == Average::none) out.emplace_back(name + "_" + std::to_string(j), score);
      sum += average_ == Average::weighted ? score * (totals[3 * c + j] / (weights + kEpsilon))
                                           : score;
    }
    if (average_ == Average::macro) out.emplace_back(name, sum / static_cast<double>(c));
    if (average_ == Average::weighted) out.emplace_back(name, sum);
  }

 private:
  // Keras' formula, epsilons included.
  static double f1(double tp, double fp, double fn) {
    const double precision = tp / (tp + fp + kEpsilon);
    const double recall = tp / (tp + fn + kEpsilon);
    return 2.0 * (precision * recall / (precision + recall + kEpsilon));
  }

  int64_t classes_;
  Average average_;
  std::optional<float> threshold_;
};

std::unique_ptr<const CountedMetric> make_f1(Options& o, const Shape& output,
                                             const std::string& who) {
  const json& given = o.value("average");
  Average average = Average::none;
  if (given == "micro")
    average = Average::micro;
  else if (given == "macro")
    average = Average::macro;
  else if (given == "weighted")
    average = Average::weighted;
  else if (!given.is_null())
    throw UsageError(who + ": average " + given.dump() +
                     " is not one drun has; valid: micro, macro, weighted (none: one per class)");
  const json& t = o.value("threshold");
  std::optional<float> threshold;
  if (!t.is_null()) {
    if (!t.is_number() || t.get<double>() <= 0.0 || t.get<double>() > 1.0)
      throw UsageError(who + ": threshold must be a number in (0, 1], got " + t.dump());
    threshold = static_cast<float>(t.get<double>());
  }
  if (output.rank() != 1)
    throw UsageError(who + ": wants outputs of one axis (batch, classes), got " + output.str() +
                     " per example");
  return std::make_unique<const F1>(output[0], average, threshold);
}

}  // namespace

const MetricInfo& f1_score_metric() {
  static const MetricInfo info{
      {{"f1_score", "F1Score"},
       "F1 of 0/1 (one-hot or multi-label) targets: per class (f1_score_0, f1_score_1...) or "
       "averaged",
       Schema{{"average", OptionType::any, nullptr,
               "'micro', 'macro', 'weighted', or none: one value per class"},
              {"threshold", OptionType::any, nullptr,
               "in (0, 1]: outputs above it count as predicted; none: each row's largest"},
              {"name", OptionType::string, nullptr, "the name results use"}}},
      nullptr,
      false,
      [](Options& o, const Shape& output, const std::string& who) {
        return make_f1(o, output, who);
      }};
  return info;
}

}  // namespace drun::nn

// Keras' Precision, Recall and AUC (keras/src/metrics/confusion_metrics.py):
// true and false positives over thresholds, counted on the device and
// derived on the host from the totals, with Keras' formulas.
#include <algorithm>
#include <cmath>

#include "nn/metrics.hpp"

namespace drun::nn {

namespace {

// Keras' thresholds option: one number or a list, each in [0, 1]; 0.5 where none is given.
kernels::Thresholds parse_thresholds(const json& given, const std::string& who) {
  const json list = given.is_null() ? json::array({0.5}) : given.is_array() ? given : json{given};
  kernels::Thresholds th;
  if (list.empty() || list.size() > kernels::Thresholds::kMax)
    throw UsageError(who + ": thresholds wants 1 to " + std::to_string(kernels::Thresholds::kMax) +
                     " values, got " + given.dump());
  for (const json& t : list) {
    if (!t.is_number() || t.get<double>() < 0.0 || t.get<double>() > 1.0)
      throw UsageError(who + ": thresholds must be numbers in [0, 1], got " + given.dump());
    th.at[th.count++] = static_cast<float>(t.get<double>());
  }
  return th;
}

// Precision (tp / (tp + fp)) or recall (tp / (tp + fn)) at each threshold;
// with several thresholds, one value each (name_0, name_1...), as Keras
// returns a vector.
class ThresholdRatio final : public CountedMetric {
 public:
  ThresholdRatio(kernels::Thresholds th, bool precision) : th_(th), precision_(precision) {}
  int64_t width() const override { return 2 * int64_t{th_.count} + 2; }
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& counts,
               const std::string& who) const override {
    check_dense_targets(pred, target, who);
    kernels::threshold_counts(ex, th_, pred, target, counts);
  }
  void finish(const double* totals, int64_t, const std::string& name,
              NamedValues& out) const override {
    const int n = th_.count;
    const double positives = totals[2 * n];
    for (int t = 0; t < n; ++t) {
      const double tp = totals[t], fp = totals[n + t];
      const double value = divide_no_nan(tp, precision_ ? tp + fp : positives);
      out.emplace_back(n == 1 ? name : name + "_" + std::to_string(t), value);
    }
  }

 private:
  kernels::Thresholds th_;
  bool precision_;
};

const Schema& ratio_schema() {
  static const Schema s{
      {"thresholds", OptionType::any, nullptr,
       "a number or a list of numbers in [0, 1]: a prediction above one counts as positive "
       "(default 0.5)"},
      {"name", OptionType::string, nullptr, "the name results use"}};
  return s;
}

MetricInfo ratio_info(std::vector<std::string> names, std::string doc, bool precision) {
  return {{std::move(names), std::move(doc), ratio_schema()},
          nullptr,
          false,
          [precision](Options& o, const Shape&, const std::string& who) {
            return std::make_unique<const ThresholdRatio>(
                parse_thresholds(o.value("thresholds"), who), precision);
          }};
}

enum class Curve { roc, pr };
enum class Summation { interpolation, minoring, majoring };

// The area under the ROC or precision-recall curve over Keras' evenly
// spaced thresholds: the counts are the positives and negatives of each
// bucket between two thresholds; threshold t's true positives are those of
// buckets t and above.
class Auc final : public CountedMetric {
 public:
  Auc(int64_t thresholds, Curve curve, Summation summation)
      : n_(thresholds), curve_(curve), summation_(summation) {}
  int64_t width() const override { return 2 * n_; }
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& counts,
               const std::string& who) const override {
    check_dense_targets(pred, target, who);
    kernels::bucket_counts(ex, pred, target, counts);
  }
  void finish(const double* totals, int64_t, const std::string& name,
              NamedValues& out) const override {
    const size_t n = static_cast<size_t>(n_);
    std::vector<double> tp(n), fp(n), fn(n), tn(n);
    double pos = 0.0, neg = 0.0;
    for (size_t t = n; t-- > 0;) {
      pos += totals[t];
      neg += totals[n + t];
      tp[t] = pos;
      fp[t] = neg;
    }
    for (size_t t = 0; t < n; ++t) fn[t] = pos - tp[t], tn[t] = neg - fp[t];
    out.emplace_back(name, curve_ == Curve::pr && summation_ == Summation::interpolation
                               ? interpolated_pr(tp, fp, fn)
                               : riemann(tp, fp, fn, tn));
  }

 private:
  // Keras' interpolate_pr_auc (Davis & Goadrich): precision varies along
  // each interval as the true and predicted positives do linearly.
  double interpolated_pr(const std::vector<double>& tp, const std::vector<double>& fp,
                         const std::vector<double>& fn) const {
    double area = 0.0;
    for (size_t i = 0; i + 1 < tp.size(); ++i) {
      const double dtp = tp[i] - tp[i + 1];
      const double p0 = tp[i] + fp[i], p1 = tp[i + 1] + fp[i + 1];
      const double slope = divide_no_nan(dtp, std::max(p0 - p1, 0.0));
      const double intercept = tp[i + 1] - slope * p1;
      const double ratio = p0 > 0 && p1 > 0 ? divide_no_nan(p0, std::max(p1, 0.0)) : 1.0;
      area += divide_no_nan(slope * (dtp + intercept * std::log(ratio)),
                            std::max(tp[i + 1] + fn[i + 1], 0.0));
    }
    return area;
  }

  double riemann(const std::vector<double>& tp, const std::vector<double>& fp,
                 const std::vector<double>& fn, const std::vector<double>& tn) const {
    const size_t n = tp.size();
    std::vector<double> x(n), y(n);
    for (size_t t = 0; t < n; ++t) {
      const double recall = divide_no_nan(tp[t], tp[t] + fn[t]);
      if (curve_ == Curve::roc) {
        x[t] = divide_no_nan(fp[t], fp[t] + tn[t]);
        y[t] = recall;
      } else {
        x[t] = recall;
        y[t] = divide_no_nan(tp[t], tp[t] + fp[t]);
      }
    }
    double area = 0.0;
    for (size_t i = 0; i + 1 < n; ++i) {
      const double height = summation_ == Summation::interpolation ? (y[i] + y[i + 1]) / 2.0
                            : summation_ == Summation::minoring    ? std::min(y[i], y[i + 1])
                                                                   : std::max(y[i], y[i + 1]);
      area += (x[i] - x[i + 1]) * height;
    }
    return area;
  }

  int64_t n_;
  Curve curve_;
  Summation summation_;
};

std::unique_ptr<const CountedMetric> make_auc(Options& o, const std::string& who) {
  const int64_t n = o.get<int64_t>("num_thresholds");
  if (n < 2) throw UsageError(who + ": num_thresholds must be above 1, got " + std::to_string(n));
  const std::string curve = o.get<std::string>("curve");
  const std::string sum = o.get<std::string>("summation_method");
  Curve c;
  if (curve == "ROC" || curve == "roc")
    c = Curve::roc;
  else if (curve == "PR" || curve == "pr")
    c = Curve::pr;
  else
    throw UsageError(who + ": curve '" + curve + "' is not one drun has; valid: ROC, PR");
  Summation s;
  if (sum == "interpolation" || sum == "Interpolation")
    s = Summation::interpolation;
  else if (sum == "minoring" || sum == "Minoring")
    s = Summation::minoring;
  else if (sum == "majoring" || sum == "Majoring")
    s = Summation::majoring;
  else
    throw UsageError(who + ": summation_method '" + sum +
                     "' is not one drun has; valid: interpolation, majoring, minoring");
  return std::make_unique<const Auc>(n, c, s);
}

}  // namespace

const MetricInfo& precision_metric() {
  static const MetricInfo info = ratio_info(
      {"precision", "Precision"},
      "true positives over predicted positives (outputs above the threshold), every output "
      "against 0/1 targets",
      true);
  return info;
}

const MetricInfo& recall_metric() {
  static const MetricInfo info = ratio_info(
      {"recall", "Recall"},
      "true positives over positive targets (outputs above the threshold), every output against "
      "0/1 targets",
      false);
  return info;
}

const MetricInfo& auc_metric() {
  static const MetricInfo info{
      {{"auc", "AUC"},
       "the area under the ROC or precision-recall curve of every output against 0/1 targets, "
       "over Keras' evenly spaced thresholds",
       Schema{{"num_thresholds", OptionType::integer, 200,
               "thresholds (Keras' evenly spaced ones in [0, 1] and two just outside)"},
              {"curve", OptionType::string, "ROC", "ROC or PR (precision-recall)"},
              {"summation_method", OptionType::string, "interpolation",
               "interpolation, minoring or majoring (Keras' Riemann sums)"},
              {"name", OptionType::string, nullptr, "the name results use"}}},
      nullptr,
      false,
      [](Options& o, const Shape&, const std::string& who) { return make_auc(o, who); }};
  return info;
}

}  // namespace drun::nn

// Metrics that are ratios of counts (top-k accuracy, precision, recall, AUC,
// F1): a batch writes its counts (kernels/metric_counts.hpp), workers and
// batches add them up as whole numbers, and finish() derives the metric from
// the totals once, so that N workers report exactly what one would.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/ops.hpp"

namespace drun::nn {

// Reported values by name, in order (train::MetricValues).
using NamedValues = std::vector<std::pair<std::string, double>>;

class CountedMetric {
 public:
  virtual ~CountedMetric() = default;
  // The float32 counts a batch writes.
  virtual int64_t width() const = 0;
  // counts (width()) = the batch's; UsageError naming `who` where the
  // targets do not fit the predictions.
  virtual void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
                       Tensor& counts, const std::string& who) const = 0;
  // The value(s) under `name` from the summed counts and the rows they came from.
  virtual void finish(const double* totals, int64_t rows, const std::string& name,
                      NamedValues& out) const = 0;
};

// Keras' divide_no_nan: 0 where the divisor is 0.
inline double divide_no_nan(double a, double b) {
  return b == 0.0 ? 0.0 : a / b;
}

// Predictions and targets as the counted metrics but sparse top-k take
// them: float32 targets of the predictions' size.
void check_dense_targets(const Tensor& pred, const Tensor& target, const std::string& who);

}  // namespace drun::nn

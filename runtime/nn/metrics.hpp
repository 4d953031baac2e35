// Metrics as Keras names them: accuracy, mse, mae. A metric measures one
// batch as a sum (on the device the model runs on) and says how many values
// that sum counts; train/running_values adds them up over an epoch.
#pragma once
#include <string>
#include <vector>

#include "kernels/ops.hpp"

namespace drun::nn {

class Metric {
 public:
  // name: "accuracy" (or "acc"), "mse", "mae". from_logits tells binary
  // accuracy where its threshold is (0 for logits, 0.5 for probabilities).
  Metric(const std::string& name, bool from_logits);
  const std::string& name() const { return name_; }
  // sum (one float32 on pred's device) = the batch's hits or errors; throws a
  // UsageError where the targets do not fit the predictions.
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
               Tensor& sum) const;
  // What the sum of a batch counts: its examples (accuracy) or values (mse, mae).
  int64_t count(const Shape& pred) const;

 private:
  kernels::MetricKind kind(const Tensor& pred, const Tensor& target) const;
  std::string name_;
  bool from_logits_;
};

std::vector<Metric> make_metrics(const std::vector<std::string>& names, bool from_logits);

}  // namespace drun::nn

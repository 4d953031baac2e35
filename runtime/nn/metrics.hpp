// Metrics accumulated over the batches of an epoch: accuracy, mse, mae.
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
  void reset();
  void update(const kernels::Exec& ex, const Tensor& pred, const Tensor& target);
  double result() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  const std::string& name() const { return name_; }
  // Raw sums, so that workers can add theirs before dividing.
  double sum() const { return sum_; }
  int64_t count() const { return count_; }
  void set(double sum, int64_t count) {
    sum_ = sum;
    count_ = count;
  }

 private:
  std::string name_;
  bool from_logits_;
  double sum_ = 0.0;
  int64_t count_ = 0;
  Tensor argmax_, target_argmax_, host_pred_, host_target_;
};

std::vector<Metric> make_metrics(const std::vector<std::string>& names, bool from_logits);

}  // namespace drun::nn

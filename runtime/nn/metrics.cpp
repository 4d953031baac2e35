#include "nn/metrics.hpp"

#include "base/options.hpp"

namespace drun::nn {

Metric::Metric(const std::string& name, bool from_logits)
    : name_(name == "acc" ? "accuracy" : name), from_logits_(from_logits) {
  if (name_ != "accuracy" && name_ != "mse" && name_ != "mae")
    throw UsageError("unknown metric '" + name + "'; valid: accuracy, mse, mae");
}

kernels::MetricKind Metric::kind(const Tensor& pred, const Tensor& target) const {
  using K = kernels::MetricKind;
  const int64_t rows = pred.rank() ? pred.dim(0) : 0;
  if (name_ == "accuracy" && target.dtype() == DType::i32) {  // class labels
    if (target.numel() != rows)
      throw UsageError("metric 'accuracy': " + target.shape().str() + " labels for predictions " +
                       pred.shape().str() + " (one label per example)");
    return K::label_accuracy;
  }
  if (target.dtype() != DType::f32 || target.numel() != pred.numel())
    throw UsageError("metric '" + name_ + "': targets " + target.shape().str() + " " +
                     dtype_name(target.dtype()) + " do not match predictions " +
                     pred.shape().str());
  if (name_ == "mse") return K::squared_error;
  if (name_ == "mae") return K::absolute_error;
  if (rows && pred.numel() / rows > 1) return K::onehot_accuracy;
  return from_logits_ ? K::binary_accuracy_logits : K::binary_accuracy_probs;
}

void Metric::measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
                     Tensor& sum) const {
  kernels::metric_sum(ex, kind(pred, target), pred, target, sum);
}

int64_t Metric::count(const Shape& pred) const {
  if (name_ != "accuracy") return pred.numel();
  return pred.rank() ? pred[0] : 0;
}

std::vector<Metric> make_metrics(const std::vector<std::string>& names, bool from_logits) {
  std::vector<Metric> out;
  for (const auto& n : names) out.emplace_back(n, from_logits);
  return out;
}

}  // namespace drun::nn

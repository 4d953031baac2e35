#include "nn/metrics.hpp"

#include <cmath>

#include "base/options.hpp"

namespace drun::nn {

Metric::Metric(const std::string& name, bool from_logits)
    : name_(name == "acc" ? "accuracy" : name), from_logits_(from_logits) {
  if (name_ != "accuracy" && name_ != "mse" && name_ != "mae")
    throw UsageError("unknown metric '" + name + "'; valid: accuracy, mse, mae");
}

void Metric::reset() {
  sum_ = 0.0, count_ = 0;
}

namespace {
// Metrics count on the host: a GPU's predictions (a few values per example)
// come back into a buffer that is reused from step to step.
const Tensor& on_host(const Tensor& t, Tensor& buffer) {
  if (t.device() == Device::cpu) return t;
  buffer.ensure(t.shape(), t.dtype());
  buffer.copy_from(t);
  return buffer;
}
}  // namespace

void Metric::update(const kernels::Exec& device_ex, const Tensor& device_pred,
                    const Tensor& device_target) {
  const kernels::Exec ex{Device::cpu, device_ex.threads};
  const Tensor& pred = on_host(device_pred, host_pred_);
  const Tensor& target = on_host(device_target, host_target_);
  const int64_t rows = pred.dim(0), cols = pred.numel() / rows;
  if (name_ == "accuracy") {
    if (target.dtype() == DType::i32) {  // class labels
      argmax_.ensure(Shape{rows}, DType::i32);
      kernels::argmax_rows(ex, pred, argmax_);
      const int32_t* a = argmax_.i32();
      const int32_t* t = target.i32();
      for (int64_t r = 0; r < rows; ++r) sum_ += a[r] == t[r];
    } else if (cols == 1) {  // binary
      const float threshold = from_logits_ ? 0.0f : 0.5f;
      const float* p = pred.f32();
      const float* t = target.f32();
      for (int64_t r = 0; r < rows; ++r) sum_ += (p[r] > threshold) == (t[r] > 0.5f);
    } else {  // one-hot
      argmax_.ensure(Shape{rows}, DType::i32);
      target_argmax_.ensure(Shape{rows}, DType::i32);
      kernels::argmax_rows(ex, pred, argmax_);
      kernels::argmax_rows(ex, target, target_argmax_);
      for (int64_t r = 0; r < rows; ++r) sum_ += argmax_.i32()[r] == target_argmax_.i32()[r];
    }
    count_ += rows;
    return;
  }
  if (target.dtype() != DType::f32 || target.numel() != pred.numel())
    throw UsageError("metric '" + name_ + "': targets " + target.shape().str() +
                     " do not match predictions " + pred.shape().str());
  const float* p = pred.f32();
  const float* t = target.f32();
  for (int64_t i = 0; i < pred.numel(); ++i) {
    const double d = static_cast<double>(p[i]) - t[i];
    sum_ += name_ == "mse" ? d * d : std::fabs(d);
  }
  count_ += pred.numel();
}

std::vector<Metric> make_metrics(const std::vector<std::string>& names, bool from_logits) {
  std::vector<Metric> out;
  for (const auto& n : names) out.emplace_back(n, from_logits);
  return out;
}

}  // namespace drun::nn

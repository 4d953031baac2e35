#include "nn/metrics.hpp"

#include "base/options.hpp"

namespace drun::nn {

namespace {

using K = kernels::MetricKind;

// Targets of predictions' size in float32, as every metric but accuracy
// against class labels needs.
void check_dense_targets(const Tensor& pred, const Tensor& target, const std::string& who) {
  if (target.dtype() != DType::f32 || target.numel() != pred.numel())
    throw UsageError("metric '" + who + "': targets " + target.shape().str() + " " +
                     dtype_name(target.dtype()) + " do not match predictions " +
                     pred.shape().str());
}

}  // namespace

const MetricInfo& accuracy_metric() {
  static const MetricInfo info{
      {{"accuracy", "acc"},
       "argmax of the outputs against integer or one-hot labels; one output: above 0.5 (0 with "
       "logits) against 0/1 labels"},
      [](const Tensor& pred, const Tensor& target, bool from_logits, const std::string& who) {
        const auto [rows, classes] = kernels::class_rows(pred.shape());
        if (target.dtype() == DType::i32) {  // class labels
          if (target.numel() != rows)
            throw UsageError("metric '" + who + "': " + target.shape().str() +
                             " labels for predictions " + pred.shape().str() +
                             " (one label per example, or per step of a sequence)");
          return K::label_accuracy;
        }
        check_dense_targets(pred, target, who);
        if (classes > 1) return K::onehot_accuracy;
        return from_logits ? K::binary_accuracy_logits : K::binary_accuracy_probs;
      },
      true};
  return info;
}

const MetricInfo& mse_metric() {
  static const MetricInfo info{
      {{"mse"}, "the mean squared error"},
      [](const Tensor& pred, const Tensor& target, bool, const std::string& who) {
        check_dense_targets(pred, target, who);
        return K::squared_error;
      },
      false};
  return info;
}

const MetricInfo& mae_metric() {
  static const MetricInfo info{
      {{"mae"}, "the mean absolute error"},
      [](const Tensor& pred, const Tensor& target, bool, const std::string& who) {
        check_dense_targets(pred, target, who);
        return K::absolute_error;
      },
      false};
  return info;
}

const std::vector<const MetricInfo*>& metric_registry() {
  static const std::vector<const MetricInfo*> entries = {
#define DRUN_METRIC(id) &id##_metric(),
#include "nn/metric_list.hpp"
#undef DRUN_METRIC
  };
  return entries;
}

Metric::Metric(const std::string& name, bool from_logits)
    : info_(&entry_named(metric_registry(), name, "metric")),
      name_(info_->about.name()),
      from_logits_(from_logits) {}

void Metric::measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
                     Tensor& sum) const {
  kernels::metric_sum(ex, info_->kind(pred, target, from_logits_, name_), pred, target, sum);
}

int64_t Metric::count(const Shape& pred) const {
  if (!info_->per_example) return pred.numel();
  // Accuracy counts rows: examples, or every step of every example of a
  // sequence, as Keras averages them.
  return kernels::class_rows(pred).rows;
}

std::vector<Metric> make_metrics(const std::vector<std::string>& names, bool from_logits) {
  std::vector<Metric> out;
  for (const auto& n : names) out.emplace_back(n, from_logits);
  return out;
}

}  // namespace drun::nn

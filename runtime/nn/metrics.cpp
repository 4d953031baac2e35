#include "nn/metrics.hpp"

#include <tuple>

#include "base/options.hpp"

namespace drun::nn {

namespace {
using K = kernels::MetricKind;
}  // namespace

// Targets of predictions' size in float32, as every metric but accuracy
// and top-k against class labels needs.
void check_dense_targets(const Tensor& pred, const Tensor& target, const std::string& who) {
  if (target.dtype() != DType::f32 || target.numel() != pred.numel())
    throw UsageError("metric '" + who + "': targets " + target.shape().str() + " " +
                     dtype_name(target.dtype()) + " do not match predictions " +
                     pred.shape().str());
}

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

namespace {

// The registry's entry and the config of a name or a {class_name, config}.
std::pair<const MetricInfo*, json> parse_spec(const json& spec) {
  if (spec.is_string())
    return {&entry_named(metric_registry(), spec.get<std::string>(), "metric"), json::object()};
  if (!spec.is_object() || !spec.contains("class_name") || !spec["class_name"].is_string())
    throw UsageError("metric: expected a name or {class_name = ..., config = {...}}, got " +
                     spec.dump());
  return {&entry_named(metric_registry(), spec["class_name"].get<std::string>(), "metric"),
          spec.value("config", json::object())};
}

}  // namespace

Metric::Metric(const json& spec, bool from_logits, const Shape& output)
    : from_logits_(from_logits) {
  json config;
  std::tie(info_, config) = parse_spec(spec);
  Options o(config, info_->about.name(), info_->about.schema);
  name_ = info_->about.schema.find("name") ? o.get<std::string>("name", info_->about.name())
                                           : info_->about.name();
  if (info_->counted) counted_ = info_->counted(o, output, name_);
}

void Metric::measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
                     Tensor& counts) const {
  if (counted_) return counted_->measure(ex, pred, target, counts, name_);
  kernels::metric_sum(ex, info_->kind(pred, target, from_logits_, name_), pred, target, counts);
}

int64_t Metric::count(const Shape& pred) const {
  if (!counted_ && !info_->per_example) return pred.numel();
  // Accuracy counts rows: examples, or every step of every example of a
  // sequence, as Keras averages them.
  return kernels::class_rows(pred).rows;
}

void Metric::report(const double* totals, int64_t count, NamedValues& out) const {
  if (counted_) return counted_->finish(totals, count, name_, out);
  out.emplace_back(name_, count ? totals[0] / static_cast<double>(count) : 0.0);
}

std::vector<Metric> make_metrics(const json& specs, bool from_logits, const Shape& output) {
  std::vector<Metric> out;
  for (const auto& spec : specs) {
    out.emplace_back(spec, from_logits, output);
    for (size_t i = 0; i + 1 < out.size(); ++i)
      if (out[i].name() == out.back().name())
        throw UsageError("metrics: two report as '" + out.back().name() +
                         "'; give one a name (e.g. drun.metrics.AUC{name = 'pr_auc'})");
  }
  return out;
}

}  // namespace drun::nn

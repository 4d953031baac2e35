// Metrics as Keras names them: accuracy (or acc), mse, mae, top-k accuracy,
// precision, recall, AUC and F1, the metric registry's (nn/metric_list.hpp).
// A metric measures one batch (on the device the model runs on) as a few
// float32 values, its counts; train/running_values adds them up over an
// epoch and over workers, and the metric is derived from the totals once.
// accuracy, mse and mae write one sum and divide it by how many values it
// counts; the others (nn/counted_metric.hpp) write counts a ratio is made of.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/registry.hpp"
#include "kernels/ops.hpp"
#include "nn/counted_metric.hpp"

namespace drun::nn {

// A metric: its names (the one results use first), its options, and how it
// measures a batch.
struct MetricInfo {
  Described about;
  // A sum's kernel for these predictions and targets (UsageError where the
  // targets do not fit); `who` names the metric in messages. Null for a
  // counted metric.
  std::function<kernels::MetricKind(const Tensor& pred, const Tensor& target, bool from_logits,
                                    const std::string& who)>
      kind;
  bool per_example = false;  // the sum counts rows (accuracy: kernels::class_rows), else values
  // A counted metric for these options and the model's output (one
  // example's shape); UsageError for bad options. Null for a sum.
  std::function<std::unique_ptr<const CountedMetric>(Options& options, const Shape& output,
                                                     const std::string& who)>
      counted;
};

#define DRUN_METRIC(id) const MetricInfo& id##_metric();
#include "nn/metric_list.hpp"
#undef DRUN_METRIC

// Every metric, in the list's order.
const std::vector<const MetricInfo*>& metric_registry();

class Metric {
 public:
  // spec: a name of the registry ("accuracy", "auc", ...) or {class_name,
  // config} (drun.metrics.AUC{curve = 'PR'}); UsageError listing the names
  // for an unknown one, or for bad options. from_logits tells binary
  // accuracy where its threshold is (0 for logits, 0.5 for probabilities);
  // output is one example's output shape (F1Score counts its classes).
  Metric(const json& spec, bool from_logits, const Shape& output = Shape{1});
  // The name results use: the config's `name`, else the registry's first.
  const std::string& name() const { return name_; }
  // The counts a batch writes (float32): 1 for the sums.
  int64_t width() const { return counted_ ? counted_->width() : 1; }
  // counts (width() float32 on pred's device) = the batch's; throws a
  // UsageError where the targets do not fit the predictions.
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
               Tensor& counts) const;
  // What a batch adds to the count its values are divided by: rows,
  // examples or steps of sequences (accuracy, top-k), or values (mse, mae).
  int64_t count(const Shape& pred) const;
  // Appends the metric's values (one, or F1Score's one per class) derived
  // from totals (width() of them) and count, summed over batches and workers.
  void report(const double* totals, int64_t count, NamedValues& out) const;

 private:
  const MetricInfo* info_;
  std::string name_;
  bool from_logits_;
  std::shared_ptr<const CountedMetric> counted_;
};

// The metrics of compile's `metrics` list (names or descriptions);
// UsageError where two would report under the same name.
std::vector<Metric> make_metrics(const json& specs, bool from_logits, const Shape& output);

}  // namespace drun::nn

// Metrics as Keras names them: accuracy (or acc), mse, mae, the metric
// registry's (nn/metric_list.hpp). A metric measures one batch as a sum (on
// the device the model runs on) and says how many values that sum counts;
// train/running_values adds them up over an epoch.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "base/registry.hpp"
#include "kernels/ops.hpp"

namespace drun::nn {

// A metric: its names (the one results use first), no options, and how it
// measures a batch.
struct MetricInfo {
  Described about;
  // The kernel for these predictions and targets (UsageError where the
  // targets do not fit); `who` names the metric in messages.
  std::function<kernels::MetricKind(const Tensor& pred, const Tensor& target, bool from_logits,
                                    const std::string& who)>
      kind;
  bool per_example = false;  // the sum counts rows (accuracy: kernels::class_rows), else values
};

#define DRUN_METRIC(id) const MetricInfo& id##_metric();
#include "nn/metric_list.hpp"
#undef DRUN_METRIC

// Every metric, in the list's order.
const std::vector<const MetricInfo*>& metric_registry();

class Metric {
 public:
  // name: a name of the registry ("accuracy", "acc", "mse", "mae"; UsageError
  // listing them otherwise). from_logits tells binary accuracy where its
  // threshold is (0 for logits, 0.5 for probabilities).
  Metric(const std::string& name, bool from_logits);
  const std::string& name() const { return name_; }
  // sum (one float32 on pred's device) = the batch's hits or errors; throws a
  // UsageError where the targets do not fit the predictions.
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
               Tensor& sum) const;
  // What the sum of a batch counts: its rows, examples or steps of sequences
  // (accuracy), or values (mse, mae).
  int64_t count(const Shape& pred) const;

 private:
  const MetricInfo* info_;
  std::string name_;
  bool from_logits_;
};

std::vector<Metric> make_metrics(const std::vector<std::string>& names, bool from_logits);

}  // namespace drun::nn

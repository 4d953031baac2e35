#include "train/running_values.hpp"

#include <algorithm>
#include <stdexcept>

#include "train/hooks.hpp"

namespace drun::train {

RunningValues::RunningValues(std::vector<nn::Metric> metrics, Device device)
    : metrics_(std::move(metrics)),
      columns_(1 + static_cast<int64_t>(metrics_.size())),
      log_(Shape{kSteps * columns_}, DType::f32, device),
      host_log_(Shape{kSteps * columns_}),
      step_row_(Shape{columns_}, DType::f32, device),
      loss_slot_(step_row_.rows(0, 1)),
      row_examples_(kSteps, 0),
      metric_sums_(metrics_.size(), 0.0),
      metric_counts_(metrics_.size(), 0) {}

void RunningValues::measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target) {
  for (size_t m = 0; m < metrics_.size(); ++m) {
    const int64_t at = 1 + static_cast<int64_t>(m);
    Tensor cell = step_row_.rows(at, at + 1);
    metrics_[m].measure(ex, pred, target, cell);
  }
}

void RunningValues::commit(const kernels::Exec& ex, const Shape& pred, int64_t examples) {
  Tensor row = log_.rows(rows_ * columns_, (rows_ + 1) * columns_);
  kernels::cast(ex, step_row_, row);  // a copy on the device
  for (size_t m = 0; m < metrics_.size(); ++m) metric_counts_[m] += metrics_[m].count(pred);
  row_examples_[static_cast<size_t>(rows_)] = examples;
  examples_ += examples;
  if (++rows_ == kSteps) read();
}

void RunningValues::read() {
  if (rows_ == 0) return;
  const int64_t n = rows_ * columns_;
  Tensor host = host_log_.rows(0, n);
  host.copy_from(log_.rows(0, n));
  const float* v = host.f32();
  for (int64_t r = 0; r < rows_; ++r) {
    const float* row = v + r * columns_;
    loss_sum_ += static_cast<double>(row[0]) * static_cast<double>(row_examples_[r]);
    for (size_t m = 0; m < metrics_.size(); ++m) metric_sums_[m] += row[1 + m];
  }
  last_loss_ = v[(rows_ - 1) * columns_];
  rows_ = 0;
}

double RunningValues::last_loss() {
  read();
  return last_loss_;
}

double RunningValues::mean_loss() {
  read();
  return examples_ ? loss_sum_ / static_cast<double>(examples_) : 0.0;
}

int64_t RunningValues::examples() {
  return examples_;
}

MetricValues RunningValues::metrics() {
  read();
  MetricValues v;
  for (size_t m = 0; m < metrics_.size(); ++m)
    v.emplace_back(
        metrics_[m].name(),
        metric_counts_[m] ? metric_sums_[m] / static_cast<double>(metric_counts_[m]) : 0.0);
  return v;
}

std::vector<double> RunningValues::sums() {
  read();
  std::vector<double> s{loss_sum_, static_cast<double>(examples_)};
  for (size_t m = 0; m < metrics_.size(); ++m) {
    s.push_back(metric_sums_[m]);
    s.push_back(static_cast<double>(metric_counts_[m]));
  }
  return s;
}

void RunningValues::set_sums(const std::vector<double>& s) {
  if (s.size() != 2 + 2 * metrics_.size())
    throw std::logic_error("RunningValues::set_sums: " + std::to_string(s.size()) + " values for " +
                           std::to_string(metrics_.size()) + " metrics");
  read();
  loss_sum_ = s[0];
  examples_ = static_cast<int64_t>(s[1]);
  for (size_t m = 0; m < metrics_.size(); ++m) {
    metric_sums_[m] = s[2 + 2 * m];
    metric_counts_[m] = static_cast<int64_t>(s[3 + 2 * m]);
  }
}

void RunningValues::reset() {
  rows_ = 0;  // values of steps before the reset count nowhere
  loss_sum_ = 0.0;
  examples_ = 0;
  std::fill(metric_sums_.begin(), metric_sums_.end(), 0.0);
  std::fill(metric_counts_.begin(), metric_counts_.end(), 0);
}

// StepResult's readers (train/hooks.hpp).
double StepResult::loss() const {
  return values->last_loss();
}
MetricValues StepResult::running() const {
  MetricValues v{{"loss", values->mean_loss()}};
  for (auto& m : values->metrics()) v.push_back(std::move(m));
  return v;
}

}  // namespace drun::train

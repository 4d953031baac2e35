#include "train/running_values.hpp"

#include <algorithm>
#include <stdexcept>

#include "train/hooks.hpp"

namespace drun::train {

namespace {
// Each metric's first column after the loss, and one past the last.
std::vector<int64_t> offsets_of(const std::vector<nn::Metric>& metrics) {
  std::vector<int64_t> at{0};
  for (const auto& m : metrics) at.push_back(at.back() + m.width());
  return at;
}
}  // namespace

RunningValues::RunningValues(std::vector<nn::Metric> metrics, Device device)
    : metrics_(std::move(metrics)),
      offsets_(offsets_of(metrics_)),
      columns_(1 + offsets_.back()),
      log_(Shape{kSteps * columns_}, DType::f32, device),
      host_log_(Shape{kSteps * columns_}),
      step_row_(Shape{columns_}, DType::f32, device),
      loss_slot_(step_row_.rows(0, 1)),
      row_examples_(kSteps, 0),
      metric_totals_(static_cast<size_t>(offsets_.back()), 0.0),
      metric_counts_(metrics_.size(), 0) {}

void RunningValues::measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target) {
  for (size_t m = 0; m < metrics_.size(); ++m) {
    Tensor cells = step_row_.rows(1 + offsets_[m], 1 + offsets_[m + 1]);
    metrics_[m].measure(ex, pred, target, cells);
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
    for (size_t c = 0; c < metric_totals_.size(); ++c) metric_totals_[c] += row[1 + c];
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
    metrics_[m].report(metric_totals_.data() + offsets_[m], metric_counts_[m], v);
  return v;
}

std::vector<double> RunningValues::sums() {
  read();
  std::vector<double> s{loss_sum_, static_cast<double>(examples_)};
  for (size_t m = 0; m < metrics_.size(); ++m) {
    s.insert(s.end(), metric_totals_.begin() + offsets_[m],
             metric_totals_.begin() + offsets_[m + 1]);
    s.push_back(static_cast<double>(metric_counts_[m]));
  }
  return s;
}

void RunningValues::set_sums(const std::vector<double>& s) {
  if (s.size() != 2 + metric_totals_.size() + metrics_.size())
    throw std::logic_error("RunningValues::set_sums: " + std::to_string(s.size()) + " values for " +
                           std::to_string(metrics_.size()) + " metrics of " +
                           std::to_string(metric_totals_.size()) + " totals");
  read();
  loss_sum_ = s[0];
  examples_ = static_cast<int64_t>(s[1]);
  size_t at = 2;
  for (size_t m = 0; m < metrics_.size(); ++m) {
    for (int64_t c = offsets_[m]; c < offsets_[m + 1]; ++c) metric_totals_[c] = s[at++];
    metric_counts_[m] = static_cast<int64_t>(s[at++]);
  }
}

void RunningValues::reset() {
  rows_ = 0;  // values of steps before the reset count nowhere
  loss_sum_ = 0.0;
  examples_ = 0;
  std::fill(metric_totals_.begin(), metric_totals_.end(), 0.0);
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

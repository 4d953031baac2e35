// The running loss and metrics of an epoch or an evaluation. Each step's
// values (its mean loss, each metric's batch sum) are written on the model's
// device into the step's row, always the same memory (so that a step
// captured into a CUDA graph writes them where the next step's would go),
// and copied from there into one row of a log; they come to the host in one copy when
// someone reads them (a progress line, a hook that asks, the epoch's end) or
// when the log is full. So a step on a GPU waits for none of its values, and
// the next step's kernels queue up behind it. Sums are kept in double on the
// host, as Keras keeps its metrics' totals. A metric writes width() values
// per step (one sum, or a counted metric's counts), side by side in the row.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/metrics.hpp"
#include "train/progress.hpp"

namespace drun::train {

class RunningValues {
 public:
  RunningValues(std::vector<nn::Metric> metrics, Device device);

  // Where each step's mean loss goes: one float32 on the device.
  Tensor& loss_slot() { return loss_slot_; }
  // After the loss is in its slot: measure() puts the metrics of the batch
  // into the step's row (device work only), commit() copies the row into
  // the log and counts the step's `examples` toward the running loss (the
  // predictions' shape gives what each metric's sum counts). add_step does
  // both. Throws a UsageError where a metric's targets do not fit the predictions.
  void measure(const kernels::Exec& ex, const Tensor& pred, const Tensor& target);
  void commit(const kernels::Exec& ex, const Shape& pred, int64_t examples);
  void add_step(const kernels::Exec& ex, const Tensor& pred, const Tensor& target,
                int64_t examples) {
    measure(ex, pred, target);
    commit(ex, pred.shape(), examples);
  }

  // The readers: each first brings the steps not yet read to the host.
  double last_loss();      // the last step's mean loss
  double mean_loss();      // over the examples since reset()
  MetricValues metrics();  // each metric's running average, by name
  int64_t examples();      // since reset()
  // Raw sums (a read), so that workers can add theirs up: loss sum, examples, then
  // each metric's totals (its width) and count. Counts of whole numbers add
  // up exactly in any order: N workers' totals are one worker's.
  std::vector<double> sums();
  void set_sums(const std::vector<double>& sums);
  // Starts over; values of steps not yet read are dropped.
  void reset();

 private:
  // Copies the log's rows in use to the host, adds them to the sums, and starts the log over.
  void read();

  static constexpr int64_t kSteps = 256;  // rows of the log: one read per 256 steps at least
  std::vector<nn::Metric> metrics_;
  std::vector<int64_t> offsets_;  // each metric's first column after the loss
  int64_t columns_;               // the loss, then each metric's width
  Tensor log_;                    // (kSteps * columns_) on the device
  // Its copy on the host, not pinned: pinning would open a CUDA context in a
  // CPU run on a GPU machine, for a few kilobytes read now and then.
  Tensor host_log_;
  Tensor step_row_;                    // (columns_) on the device: the step's values
  Tensor loss_slot_;                   // a view of the step row's loss
  int64_t rows_ = 0;                   // of the log, written and not yet read
  std::vector<int64_t> row_examples_;  // kSteps: each row's examples, for the loss' weight
  double loss_sum_ = 0.0, last_loss_ = 0.0;
  int64_t examples_ = 0;
  std::vector<double> metric_totals_;  // columns_ - 1: each metric's, at its offset
  std::vector<int64_t> metric_counts_;
};

}  // namespace drun::train

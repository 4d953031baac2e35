// Progress: what a training run prints. On a terminal, one progress bar per
// epoch redrawn in place with ETA, loss, metrics and throughput; elsewhere
// (batch jobs, logs) plain timestamped lines, at most about ten an epoch and
// one every two seconds. Throughput counts every worker's examples, and says
// img/s only when the examples are images.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace drun::train {

using MetricValues = std::vector<std::pair<std::string, double>>;

// "loss 0.1234 - accuracy 0.9876" (each name after `prefix`): the one number
// format of every line a run prints.
std::string format_values(const MetricValues& values, const std::string& prefix = "");

// What a fit runs, as far as its lines need it.
struct ProgressPlan {
  int64_t epochs = 1;      // 0: the run is bounded by max_steps alone
  int64_t max_steps = -1;  // global step to stop at (< 0: none)
  int workers = 1;
  bool images = true;  // examples are images (img/s) or not (examples/s)
};

class Progress {
 public:
  Progress(bool tty, bool quiet, std::FILE* out = stdout);
  void set_plan(const ProgressPlan& plan) { plan_ = plan; }
  // `global_step`: the step count before the epoch's first step.
  void begin_epoch(int64_t epoch, int64_t steps, int64_t global_step = 0);
  // Whether update() at this step (1-based within the epoch) would print: the
  // caller gathers metric values only then, so a quiet step allocates nothing.
  bool due(int64_t step) const;
  // `per_worker_per_sec`: this worker's examples per second.
  void update(int64_t step, double loss, const MetricValues& metrics, double per_worker_per_sec);
  // `last`: the fit's last epoch. A run bounded by steps alone may make many
  // short epochs; their lines then follow the step lines' pace.
  void end_epoch(double loss, const MetricValues& metrics, double per_worker_per_sec,
                 const MetricValues& eval, bool last = true);
  void line(const std::string& text);

 private:
  std::string stats(double loss, const MetricValues& metrics) const;
  std::string throughput(double per_worker_per_sec) const;
  std::string epoch_label() const;
  std::string step_label(int64_t step) const;
  bool tty_, quiet_;
  std::FILE* out_;
  ProgressPlan plan_;
  int64_t epoch_ = 0, steps_ = 0, first_global_step_ = 0, next_line_step_ = 0;
  bool by_steps() const { return plan_.epochs <= 0 && plan_.max_steps >= 0; }
  void print_line(const std::string& text);  // a log line, timestamped
  std::chrono::steady_clock::time_point start_, last_draw_, last_line_;
};

}  // namespace drun::train

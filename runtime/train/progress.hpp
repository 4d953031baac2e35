// Progress: what a training run prints. On a terminal, one progress bar per
// epoch redrawn in place with ETA, loss, metrics and images/s; elsewhere
// (batch jobs, logs) plain timestamped lines at about every tenth of an epoch.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace drun::train {

using MetricValues = std::vector<std::pair<std::string, double>>;

class Progress {
 public:
  Progress(bool tty, bool quiet, std::FILE* out = stdout);
  void begin_epoch(int64_t epoch, int64_t epochs, int64_t steps);
  // Whether update() at this step (1-based within the epoch) would print: the
  // caller gathers metric values only then, so a quiet step allocates nothing.
  bool due(int64_t step) const;
  void update(int64_t step, double loss, const MetricValues& metrics, double images_per_sec);
  void end_epoch(double loss, const MetricValues& metrics, double images_per_sec,
                 const MetricValues& eval);
  void line(const std::string& text);

 private:
  std::string stats(double loss, const MetricValues& metrics) const;
  bool tty_, quiet_;
  std::FILE* out_;
  int64_t epoch_ = 0, epochs_ = 0, steps_ = 0, next_line_step_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace drun::train

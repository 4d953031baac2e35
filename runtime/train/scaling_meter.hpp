// What a multi-worker fit's steps are made of, from a few clock reads per
// step (no timeline needed): summary.json's "scaling" block and the line drun
// prints at the end (docs/platforms.md, "Why a run does not scale").
//
// Each worker splits each training step's wall time into
//   input     waiting for the next batch,
//   compute   forward, backward and the optimizer's update,
//   exchange  waiting for the gradient exchange after backward (exposed: what
//             ran behind backward is not counted), packing included,
//   other     hooks, progress, checkpoints and summaries between steps.
// Over the workers: a worker's busy time is its step less its exchange wait;
// the slowest worker is the one busiest, its lag how much busier it is than
// the others' mean, and "slowest_rank_wait" the mean over workers of how much
// less busy each is than the slowest: the part of the exchange wait spent
// waiting for it. On a GPU the parts are host time: compute includes waiting
// for the device's kernels where the host waits for them.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "base/options.hpp"

namespace drun::train {

struct StepParts {
  double input = 0.0;
  double compute = 0.0;
  double exchange = 0.0;
  double other = 0.0;
  double step = 0.0;  // measured on its own: the parts add up to it
};

// The strategy's own counters (distributed::Strategy::exchange_window).
struct ExchangeCounters {
  double window = 0.0;  // seconds from each step's first exchange start to its end
  double hidden = 0.0;  // of which during backward
  int64_t bucket_bytes = 0;
};

class ScalingMeter {
 public:
  void add(const StepParts& step);
  int64_t steps() const { return steps_; }
  const StepParts& totals() const { return totals_; }

  // The "scaling" block, on every worker (a collective: every worker calls it
  // once, with `sum` summing doubles over the workers in place):
  //   {"workers", "steps", "step_ms", "compute_ms", "exchange_ms", "input_ms",
  //    "other_ms" (means over workers of each per-step mean), "overlap" (the
  //    fraction of the exchange window hidden behind backward; absent where
  //    the strategy does not measure it), "bucket_bytes" (where there are
  //    buckets), "slowest_rank" (worker index), "slowest_rank_lag_ms",
  //    "slowest_rank_wait_ms", "per_worker": [{step_ms, ...}, ...]}
  json combine(int worker, int workers, const ExchangeCounters& exchange,
               const std::function<void(double*, int64_t)>& sum) const;

 private:
  StepParts totals_;
  int64_t steps_ = 0;
};

// One line of it: "step 41.2 ms = compute 30.1 + exchange 8.0 (62% of the
// exchange hidden behind backward) + input 2.1 + other 1.0; slowest worker 1,
// 12.3 ms a step busier than the others".
std::string scaling_line(const json& scaling);

}  // namespace drun::train

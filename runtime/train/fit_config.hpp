// FitConfig: what one fit runs (epochs, steps, model_dir and the intervals of
// checkpoints, summaries and evaluation), and its parsing from the options a
// script gives fit, with the checks on them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "train/hooks.hpp"

namespace drun::train {

class Callback;

// The epochs of a fit bounded by its steps alone.
inline constexpr int64_t kUnboundedEpochs = INT64_MAX;

struct FitConfig {
  int64_t epochs = 1;
  bool epochs_bounded = true;  // false: epochs is kUnboundedEpochs
  int64_t max_steps = -1;      // stop at this global step (< 0: no limit)
  std::string model_dir;       // summary.json, checkpoints, TensorBoard events; empty: none
  // Checkpoints (model_dir/ckpt-<step>.h5) every so many steps and/or seconds,
  // and after the last step; 0 and 0: none.
  int64_t save_checkpoints_steps = 0;
  double save_checkpoints_secs = 0;
  int keep_checkpoint_max = 5;
  // TensorBoard scalars (loss, metrics, learning rate, steps/s, images/s) every
  // so many steps into model_dir, evaluations into model_dir/eval; 0: none.
  int64_t save_summary_steps = 0;
  // TensorBoard histograms of every weight after each epoch whose 0-based
  // number is a multiple of this (Keras' TensorBoard histogram_freq: 1, 3, 5...
  // epochs for 2); 0: none.
  int64_t histogram_freq = 0;
  // Evaluate every so many global steps as well as after each epoch (0: only
  // after each epoch), on at most eval_steps batches (< 0: the whole input).
  int64_t eval_every_steps = 0;
  int64_t eval_steps = -1;
  // Chrome trace of the fit, all ranks in one file (docs/timeline.md); empty: none.
  std::string timeline;
  // The user's hooks; fit adds its own for checkpoints, summaries and evaluation.
  std::vector<Hook*> hooks;
  // Keras' callbacks (train/callbacks), run on every worker after fit's hooks.
  std::vector<Callback*> callbacks;
};

// fit's options, the one list of them (with FitConfig's defaults):
// fit_schema() is every option a script gives fit, fit_input_schema()'s (the
// inputs and hooks, which the binding reads and passes on as objects)
// followed by fit_run_schema()'s (what parse_fit_request reads: epochs, steps,
// model_dir, the intervals, timeline and strategy).
const Schema& fit_schema();
const Schema& fit_input_schema();
const Schema& fit_run_schema();

// Reads epochs (absent with steps given: unbounded), steps, model_dir, save_checkpoints_steps,
// save_checkpoints_secs, keep_checkpoint_max, save_summary_steps, histogram_freq,
// eval_every_steps, eval_steps and timeline from `o` (other keys are the caller's).
// UsageError for epochs < 1 or a negative interval.
FitConfig parse_fit_config(Options& o);

}  // namespace drun::train

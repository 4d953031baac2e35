// Hooks: code the training loop calls at fixed points (TensorFlow's
// SessionRunHook, with a few points of its own). Trainer::fit runs the user's
// hooks and, after them, its own: CheckpointSaver (train/checkpoint_saver),
// SummarySaver (train/summary_saver) and Validator (train/validator). NanGuard
// and GlobalStepWaiter are the C++ hooks a script can ask for; Lua hooks are
// adapted in the bindings. A hook asks to stop by returning true from
// after_step, or by setting EpochEnd::stop at an epoch's end; the loop stops at
// that step boundary (and, with several workers, every worker stops at the
// same step).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/options.hpp"
#include "train/checkpoint.hpp"
#include "train/progress.hpp"

namespace drun::train {

class Trainer;
class RunningValues;

struct StepResult {
  int64_t global_step = 0;  // after the step
  int64_t epoch = 0;
  int64_t batch = 0;  // batches of the epoch done, this one included
  double learning_rate = 0.0;
  int64_t batch_size = 0;
  bool ends_epoch = false;  // the epoch's last batch
  // This step's batch mean loss, and the running averages of the epoch so far
  // by name ("loss", "accuracy", ...). On a GPU each read waits for the step
  // to finish (train/running_values), so a hook reads them only when it uses them.
  double loss() const;
  MetricValues running() const;
  RunningValues* values = nullptr;  // the trainer's
};

// An epoch's end, once its training metrics are summed over the workers.
struct EpochEnd {
  int64_t epoch = 0;
  int64_t batches = 0;  // batches of the epoch done (by this fit or the one it resumes)
  MetricValues shown;   // values hooks add to the epoch's progress line (val_*)
  bool stop = false;    // a hook ends the fit here (callbacks: EarlyStopping...)
};

class Hook {
 public:
  virtual ~Hook() = default;
  virtual std::string name() const = 0;
  // Before the first step.
  virtual void begin(Trainer& trainer) { (void)trainer; }
  // Before an epoch's first step (of this fit: a resumed epoch too).
  virtual void begin_epoch(int64_t epoch) { (void)epoch; }
  virtual void before_step(int64_t global_step) { (void)global_step; }
  // Returns true to stop training after this step.
  virtual bool after_step(const StepResult& step) {
    (void)step;
    return false;
  }
  // After after_step, when training goes on: no hook asked to stop, no
  // preemption, max_steps not reached (the epoch's data may still end here).
  virtual void continuing(const StepResult& step) { (void)step; }
  // The last step has run (every epoch done, a stop, max_steps or
  // preemption) and the strategy still runs: the last moment the parameter
  // servers can take part. `at` is where a rerun would continue.
  virtual void last_step(const TrainingState& at, bool preempted) {
    (void)at;
    (void)preempted;
  }
  virtual void end_epoch(EpochEnd& epoch) { (void)epoch; }
  // After the last epoch (or preemption), before fit's result is final:
  // finish what runs in the background.
  virtual void complete() {}
  // After the last step, with what fit() is about to return.
  virtual void end(Trainer& trainer, json& result) {
    (void)trainer;
    (void)result;
  }
};

}  // namespace drun::train

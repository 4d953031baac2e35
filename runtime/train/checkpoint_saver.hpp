// CheckpointSaver: the chief's checkpoints during fit (TensorFlow's
// CheckpointSaverHook): every save_checkpoints_steps steps and/or
// save_checkpoints_secs seconds, after the last step when either is set, and
// on preemption whatever they are. At most one checkpoint per global step.
// Fit adds it on the chief when there is a model_dir, after every other hook.
// With callbacks, a checkpoint due at an epoch's last step waits for the
// epoch's end, so that it holds the callbacks' decisions on that epoch; the
// last step's is written again then.
#pragma once
#include <chrono>
#include <optional>

#include "train/checkpoint.hpp"
#include "train/fit_config.hpp"
#include "train/hooks.hpp"

namespace drun::train {

class CheckpointSaver final : public Hook {
 public:
  explicit CheckpointSaver(const FitConfig& config);
  std::string name() const override { return "CheckpointSaverHook"; }
  void begin(Trainer& trainer) override;
  bool after_step(const StepResult& step) override;
  void last_step(const TrainingState& at, bool preempted) override;
  void end_epoch(EpochEnd& epoch) override;

 private:
  void save(const TrainingState& at);

  int64_t every_steps_;
  double every_secs_;
  Checkpoints checkpoints_;
  Trainer* trainer_ = nullptr;
  int64_t saved_step_ = 0;  // the step of the newest checkpoint (or of the start)
  std::chrono::steady_clock::time_point last_save_;
  bool after_callbacks_;                  // fit has callbacks
  std::optional<TrainingState> pending_;  // due at the epoch's last step
  std::optional<TrainingState> final_;    // the last step's, to write again with the callbacks'
};

}  // namespace drun::train

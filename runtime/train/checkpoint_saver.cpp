#include "train/checkpoint_saver.hpp"

#include "train/hook_registry.hpp"
#include "train/trainer.hpp"

namespace drun::train {

// A script's CheckpointSaverHook is no hook of its own: drun.hooks turns it
// into fit's save_checkpoints_steps or save_checkpoints_secs, which this
// saver reads.
const HookInfo& checkpoint_saver_hook() {
  static const HookInfo info{
      {{"CheckpointSaverHook"},
       "checkpoints every so many steps or seconds (give one) and after the last step",
       {{"save_steps", OptionType::integer, nullptr, "the interval in steps"},
        {"save_secs", OptionType::number, nullptr, "the interval in seconds"}}},
      {}};
  return info;
}

namespace {
using Clock = std::chrono::steady_clock;
}

CheckpointSaver::CheckpointSaver(const FitConfig& config)
    : every_steps_(config.save_checkpoints_steps),
      every_secs_(config.save_checkpoints_secs),
      checkpoints_(config.model_dir, config.keep_checkpoint_max),
      after_callbacks_(!config.callbacks.empty()) {}

void CheckpointSaver::begin(Trainer& trainer) {
  trainer_ = &trainer;
  saved_step_ = trainer.global_step();
  last_save_ = Clock::now();
}

bool CheckpointSaver::after_step(const StepResult& step) {
  const bool due =
      (every_steps_ > 0 && step.global_step % every_steps_ == 0) ||
      (every_secs_ > 0 &&
       std::chrono::duration<double>(Clock::now() - last_save_).count() >= every_secs_);
  if (!due) return false;
  if (after_callbacks_ && step.ends_epoch)
    pending_ = TrainingState{step.global_step, step.epoch, step.batch};
  else
    save({step.global_step, step.epoch, step.batch});
  return false;
}

void CheckpointSaver::end_epoch(EpochEnd& epoch) {
  (void)epoch;
  if (pending_) save(*pending_);
  pending_.reset();
  // The last step's checkpoint came before the last epoch's callbacks (the
  // servers had to take part): written again with their state, so that a
  // longer rerun continues from it. The servers' shards stay as they were.
  if (final_) trainer_->save_checkpoint(checkpoints_, *final_, false);
  final_.reset();
}

void CheckpointSaver::last_step(const TrainingState& at, bool preempted) {
  if (!preempted && every_steps_ <= 0 && every_secs_ <= 0) return;
  save(at);
  if (after_callbacks_ && !preempted && at.batch == 0) final_ = at;
}

void CheckpointSaver::save(const TrainingState& at) {
  if (at.global_step != saved_step_) trainer_->save_checkpoint(checkpoints_, at);
  saved_step_ = at.global_step;
  last_save_ = Clock::now();
}

}  // namespace drun::train

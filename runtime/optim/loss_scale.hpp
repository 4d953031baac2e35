// Dynamic loss scaling (Keras' LossScaleOptimizer; Micikevicius et al.,
// "Mixed Precision Training", 2018): the loss gradient is multiplied by
// scale() before backward, so that gradients too small for float16 survive
// it; the optimizer divides the scale out again before its update. A step
// whose gradients overflowed (a NaN or infinity anywhere) is skipped and the
// scale halved; after `growth_steps` finite steps in a row it doubles. The
// scale is always a power of two, so scaling and unscaling are exact in
// float32: without an overflow, training with it gives the same bits as
// training without.
#pragma once
#include <cstdint>

namespace drun::optim {

class DynamicLossScale {
 public:
  // Keras' defaults: 2^15, 2000 steps.
  static constexpr float kDefaultInitial = 32768.0f;
  static constexpr int64_t kDefaultGrowthSteps = 2000;
  // initial_scale must be a power of two >= 1, growth_steps >= 1 (UsageError otherwise).
  DynamicLossScale(float initial_scale, int64_t growth_steps);

  float scale() const { return scale_; }
  float initial_scale() const { return initial_; }
  int64_t growth_steps() const { return growth_steps_; }
  // Finite steps since the scale last changed.
  int64_t counter() const { return counter_; }
  // Steps skipped so far (not saved in checkpoints: a count of this process).
  int64_t skipped() const { return skipped_; }

  // After a step whose gradients were `finite` (and applied) or not (and
  // skipped): halves the scale (never below 1) or counts towards doubling it.
  void update(bool finite);
  // What a checkpoint restores (scale a power of two >= 1, counter >= 0).
  void restore(float scale, int64_t counter);

 private:
  float initial_;
  int64_t growth_steps_;
  float scale_;
  int64_t counter_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace drun::optim

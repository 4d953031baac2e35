// Learning-rate schedules: the learning rate as a function of the optimizer's
// step (its iteration count before the update, as in tf.keras, so the first
// update uses at(0)). Names, keys and arithmetic follow
// tf.keras.optimizers.schedules; LinearWarmup follows the TF Model Garden's
// official.modeling.optimization.LinearWarmup.
//
// A spec is what Keras serialises: a number (a constant rate) or
//   {"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.1, ...}}
// ("module" and "registered_name", written by Keras 3, are accepted and ignored).
// The classes, their options and defaults are the schedule registry's
// (optim/schedule_list.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "base/registry.hpp"

namespace drun::optim {

class Schedule {
 public:
  virtual ~Schedule() = default;
  virtual float at(int64_t step) const = 0;
  // The spec that make_schedule turns back into this schedule: a number for
  // Constant, else {"class_name": ..., "config": {...}} with Keras' keys.
  virtual json config() const = 0;
};

class Constant final : public Schedule {
 public:
  explicit Constant(float learning_rate) : lr_(learning_rate) {}
  float at(int64_t) const override { return lr_; }
  json config() const override;

 private:
  float lr_;
};

// Keras PiecewiseConstantDecay: values[0] while step <= boundaries[0],
// values[i] while boundaries[i-1] < step <= boundaries[i], and values.back()
// once step > boundaries.back(). Needs values.size() == boundaries.size() + 1
// and non-decreasing boundaries.
class PiecewiseConstantDecay final : public Schedule {
 public:
  PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<float> values,
                         std::string name = {});
  float at(int64_t step) const override;
  json config() const override;

 private:
  std::vector<int64_t> boundaries_;
  std::vector<float> values_;
  std::string name_;
};

// Keras ExponentialDecay: initial_learning_rate * decay_rate ^ (step / decay_steps),
// the exponent floored when staircase is true.
class ExponentialDecay final : public Schedule {
 public:
  ExponentialDecay(float initial_learning_rate, int64_t decay_steps, float decay_rate,
                   bool staircase = false, std::string name = {});
  float at(int64_t step) const override;
  json config() const override;

 private:
  float initial_;
  int64_t decay_steps_;
  float decay_rate_;
  bool staircase_;
  std::string name_;
};

// Keras CosineDecay: initial * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
// decay_steps)) + alpha). With warmup_target set (Keras >= 2.13), the rate first
// rises linearly from initial_learning_rate to warmup_target over warmup_steps and
// then decays from warmup_target over the following decay_steps.
class CosineDecay final : public Schedule {
 public:
  CosineDecay(float initial_learning_rate, int64_t decay_steps, float alpha = 0.f,
              std::string name = {}, std::optional<float> warmup_target = std::nullopt,
              int64_t warmup_steps = 0);
  float at(int64_t step) const override;
  json config() const override;

 private:
  float initial_;
  int64_t decay_steps_;
  float alpha_;
  std::string name_;
  std::optional<float> warmup_target_;
  int64_t warmup_steps_;
};

// Linear warm-up in front of another schedule (Goyal et al. 2017, as the TF Model
// Garden implements it): for step < warmup_steps the rate is
//   warmup_learning_rate + (after(warmup_steps) - warmup_learning_rate) * step / warmup_steps,
// and from warmup_steps on it is after(step), not shifted: the wrapped schedule
// runs on the global step, so a decay schedule keeps its boundaries. The rate is
// continuous at warmup_steps. Config keys: after_warmup_lr_sched (a spec),
// warmup_steps, warmup_learning_rate (default 0), name.
class LinearWarmup final : public Schedule {
 public:
  LinearWarmup(std::shared_ptr<Schedule> after_warmup, int64_t warmup_steps,
               float warmup_learning_rate = 0.f, std::string name = {});
  float at(int64_t step) const override;
  json config() const override;

 private:
  std::shared_ptr<Schedule> after_;
  int64_t warmup_steps_;
  float warmup_lr_;
  float final_warmup_lr_;  // after_->at(warmup_steps_)
  std::string name_;
};

// A schedule class: its Keras name, its options (with `name`, which every
// schedule takes) and the constructor that reads them, checked.
struct ScheduleInfo {
  Described about;
  std::function<std::shared_ptr<Schedule>(Options&)> make;
};

#define DRUN_SCHEDULE(id) const ScheduleInfo& id##_schedule();
#include "optim/schedule_list.hpp"
#undef DRUN_SCHEDULE

// Every schedule, in the list's order.
const std::vector<const ScheduleInfo*>& schedule_registry();

// Builds a schedule from a spec (see the top of this file). Throws UsageError for
// a spec of the wrong type, an unknown class (listing the valid ones), an unknown
// or mistyped key (naming it and listing the valid ones) or invalid values.
std::shared_ptr<Schedule> make_schedule(const json& spec);

// A float as the JSON number with its shortest decimal form (0.01f gives 0.01,
// not 0.009999999776482582), for configs that people and Keras read.
json float_json(float v);

}  // namespace drun::optim

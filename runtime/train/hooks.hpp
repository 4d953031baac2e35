// Hooks: code the training loop calls at fixed points (TensorFlow's
// SessionRunHook). The canned hooks live in train/canned_hooks; Lua hooks are
// adapted in the bindings. A hook asks to stop by returning true from
// after_step; the loop stops at that step boundary (and, with several workers,
// every worker stops at the same step).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/options.hpp"

namespace drun::train {

class Trainer;

struct StepResult {
  int64_t global_step = 0;  // after the step
  int64_t epoch = 0;
  double loss = 0.0;  // this step's batch mean loss
  double learning_rate = 0.0;
  int64_t batch_size = 0;
  // Running averages of the epoch so far, by name ("loss", "accuracy", ...).
  std::vector<std::pair<std::string, double>> running;
};

class Hook {
 public:
  virtual ~Hook() = default;
  virtual std::string name() const = 0;
  virtual void begin(Trainer& trainer) { (void)trainer; }
  virtual void before_step(int64_t global_step) { (void)global_step; }
  // Returns true to stop training after this step.
  virtual bool after_step(const StepResult& step) {
    (void)step;
    return false;
  }
  // After the last step, with what fit() is about to return.
  virtual void end(Trainer& trainer, json& result) {
    (void)trainer;
    (void)result;
  }
};

}  // namespace drun::train

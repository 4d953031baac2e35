// GlobalStepWaiterHook: before its first step a worker waits until the job's
// global step (the parameter servers' count of applied updates) reaches
// wait_until_step. TensorFlow's Experiment uses it to start worker k only
// after k * delay_workers_by_global_step updates, so that early asynchronous
// updates come from few workers. Strategies without servers have no shared
// step to wait for: asking them to wait is an error, not a hang.
#pragma once
#include "train/hooks.hpp"

namespace drun::train {

class GlobalStepWaiter final : public Hook {
 public:
  explicit GlobalStepWaiter(int64_t wait_until_step) : wait_until_(wait_until_step) {}
  std::string name() const override { return "GlobalStepWaiterHook"; }
  void begin(Trainer& trainer) override { trainer_ = &trainer; }
  void before_step(int64_t global_step) override;

 private:
  Trainer* trainer_ = nullptr;
  int64_t wait_until_;
  bool waited_ = false;
};

}  // namespace drun::train

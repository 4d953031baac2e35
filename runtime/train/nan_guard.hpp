// NanGuard: stops the whole job when a step's loss is NaN or infinite,
// naming the step and the first layer (in forward order) whose output holds a
// non-finite value, which is where the divergence shows first.
#pragma once
#include "train/hooks.hpp"

namespace drun::train {

class NanGuard final : public Hook {
 public:
  std::string name() const override { return "NanGuard"; }
  void begin(Trainer& trainer) override { trainer_ = &trainer; }
  // Throws UsageError on a non-finite loss.
  bool after_step(const StepResult& step) override;

 private:
  Trainer* trainer_ = nullptr;
};

}  // namespace drun::train

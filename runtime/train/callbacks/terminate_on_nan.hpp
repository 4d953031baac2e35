// TerminateOnNaN (keras.callbacks.TerminateOnNaN): stops the fit at the
// first batch whose loss is NaN or infinite. It reads every step's loss,
// which on a GPU waits for the step.
#pragma once
#include "train/callbacks/callback.hpp"

namespace drun::train {

class TerminateOnNaN final : public Callback {
 public:
  std::string name() const override { return "TerminateOnNaN"; }
  bool wants_batches() const override { return true; }
  void train_batch_end(int64_t batch, const BatchLogs& logs, CallbackControl& c) override;
};

}  // namespace drun::train

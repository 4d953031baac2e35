// CallbackRunner: the hook through which fit runs the script's callbacks
// (train/callbacks/callback.hpp), on every worker, after fit's own hooks (so
// after the epoch's evaluation). At an epoch's end it makes the logs (the
// epoch's training values summed over workers, the chief's evaluation as
// val_*, the learning rate), sends the chief's to every worker, runs the
// callbacks, and sends the chief's decisions (stop, learning rate) to every
// worker, so that all stop or change the rate at the same step. Batch-level
// callbacks (wants_batches) run after each step; with several workers their
// stop is agreed on each step, which only they pay for.
//
// Its state, every callback's state() plus the rate they set, goes into
// each checkpoint (Trainer::save_checkpoint) and comes back on resume.
#pragma once
#include <optional>
#include <vector>

#include "train/callbacks/callback.hpp"
#include "train/hooks.hpp"

namespace drun::train {

struct FitResult;

// The callbacks' part of a checkpoint.
struct CallbackState {
  json state;  // {"learning_rate": set or null, "callbacks": [state per callback]}
  std::vector<std::pair<std::string, Tensor>> tensors;  // "<index>/<name>"
};

class CallbackRunner final : public Hook, private CallbackControl {
 public:
  // `result` (the fit's: its train and eval values) must outlive the runner;
  // `has_eval`: fit has an evaluation input (on every worker alike).
  CallbackRunner(std::vector<Callback*> callbacks, const FitResult& result, bool has_eval);
  std::string name() const override { return "callbacks"; }
  void begin(Trainer& trainer) override;
  void begin_epoch(int64_t epoch) override;
  bool after_step(const StepResult& step) override;
  void end_epoch(EpochEnd& epoch) override;
  void complete() override;

  CallbackState state() const;
  // Before begin: what a checkpoint held.
  void restore(const CallbackState& saved) { restored_ = saved; }

 private:
  bool chief() const override;
  double learning_rate() const override;
  void set_learning_rate(double lr) override;
  void stop_training() override { stop_ = true; }
  std::vector<Tensor> weights() const override;
  void set_weights(const std::vector<Tensor>& weights) override;
  void save_model(const std::string& path, bool weights_only) override;

  // The epoch's logs: the same on every worker (the chief's val_*).
  Logs epoch_logs();
  // The chief's stop and learning rate, on every worker.
  void agree();
  bool several_workers() const;

  std::vector<Callback*> callbacks_;
  const FitResult& result_;
  bool has_eval_;
  bool batches_ = false;  // a callback wants train_batch_end
  Trainer* trainer_ = nullptr;
  bool stop_ = false;
  std::optional<double> lr_set_;  // the rate a callback set, kept across a resume
  std::optional<CallbackState> restored_;
};

}  // namespace drun::train

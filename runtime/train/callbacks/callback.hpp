// Callbacks: Keras' keras.callbacks, run by the training loop at Keras'
// points (train begin, epoch begin and end, batch end, test end, train end).
// A callback sees `logs` by Keras' names (loss, accuracy, val_loss,
// val_accuracy, learning_rate) and acts through a CallbackControl: stop the
// fit, set the learning rate, keep and restore weights, save the model.
//
// Every worker runs every callback with the same logs (the chief's, which
// travel to the others at the epoch's end: train/callbacks/callback_runner),
// so that each takes the same decision at the same step; only the chief
// writes files. A callback's state() goes into each checkpoint and comes
// back through set_state() on resume, so that a resumed run decides as an
// uninterrupted one would.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/options.hpp"
#include "tensor/tensor.hpp"
#include "train/progress.hpp"

namespace drun::train {

struct StepResult;

// An epoch's logs: the values by name, in the order fit shows them.
struct Logs {
  MetricValues values;
  std::optional<double> get(const std::string& name) const;
  // "loss, val_loss, ...": what a message lists when a monitored value is missing.
  std::string names() const;
};

// What a callback may act on.
class CallbackControl {
 public:
  virtual ~CallbackControl() = default;
  // Only the chief writes files; every worker decides.
  virtual bool chief() const = 0;
  // The optimizer's learning rate (Keras' optimizer.learning_rate, before
  // any linear scaling over workers); setting it replaces a schedule.
  virtual double learning_rate() const = 0;
  virtual void set_learning_rate(double lr) = 0;
  // Ends the fit after this epoch (or batch).
  virtual void stop_training() = 0;
  // Host copies of the model's variables, in Keras' order, and back.
  virtual std::vector<Tensor> weights() const = 0;
  virtual void set_weights(const std::vector<Tensor>& weights) = 0;
  // A Keras .h5 at `path`, written atomically: the whole model, or its weights.
  virtual void save_model(const std::string& path, bool weights_only) = 0;
};

// A step's logs, read only when asked: on a GPU each read waits for the step.
class BatchLogs {
 public:
  explicit BatchLogs(const StepResult& step) : step_(step) {}
  double loss() const;
  // The epoch's running means so far ("loss", "accuracy", ...).
  MetricValues running() const;

 private:
  const StepResult& step_;
};

class Callback {
 public:
  virtual ~Callback() = default;
  virtual std::string name() const = 0;
  virtual void train_begin(CallbackControl& c) { (void)c; }
  virtual void epoch_begin(int64_t epoch, CallbackControl& c) {
    (void)epoch;
    (void)c;
  }
  // Whether train_batch_end must run after each step (it costs a read of the
  // step's results on a GPU, and with several workers an agreement per step).
  virtual bool wants_batches() const { return false; }
  // `batch`: the step's index within its epoch, from 0 (Keras').
  virtual void train_batch_end(int64_t batch, const BatchLogs& logs, CallbackControl& c) {
    (void)batch;
    (void)logs;
    (void)c;
  }
  // After the epoch's evaluation, with its val_* values (none without one).
  virtual void test_end(const Logs& logs, CallbackControl& c) {
    (void)logs;
    (void)c;
  }
  virtual void epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) {
    (void)epoch;
    (void)logs;
    (void)c;
  }
  virtual void train_end(CallbackControl& c) { (void)c; }
  // What a resumed run needs to decide as this one would; null: nothing.
  virtual json state() const { return nullptr; }
  virtual void set_state(const json& state) { (void)state; }
  // Tensors of that state (EarlyStopping's best weights), by name.
  virtual std::vector<std::pair<std::string, Tensor>> state_tensors() const { return {}; }
  virtual void set_state_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors) {
    (void)tensors;
  }
};

}  // namespace drun::train

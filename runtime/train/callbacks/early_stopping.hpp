// EarlyStopping (keras.callbacks.EarlyStopping): stops the fit once the
// monitored value has not improved for `patience` epochs, counted exactly as
// Keras 3 counts them (wait grows each epoch from start_from_epoch on and
// resets on an improvement that also beats the baseline; epoch 0 never
// stops). With restore_best_weights the best epoch's weights come back at
// the end of the fit, bit for bit.
#pragma once
#include <optional>

#include "train/callbacks/callback.hpp"
#include "train/callbacks/monitor.hpp"

namespace drun::train {

class EarlyStopping final : public Callback {
 public:
  explicit EarlyStopping(Options& o);
  std::string name() const override { return "EarlyStopping"; }
  void epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) override;
  void train_end(CallbackControl& c) override;
  json state() const override;
  void set_state(const json& state) override;
  std::vector<std::pair<std::string, Tensor>> state_tensors() const override;
  void set_state_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors) override;

  int64_t stopped_epoch() const { return stopped_epoch_; }
  int64_t best_epoch() const { return best_epoch_; }

 private:
  Monitor monitor_;
  int64_t patience_, verbose_, start_from_epoch_;
  std::optional<double> baseline_;
  bool restore_best_weights_;
  int64_t wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
  std::optional<double> best_;
  std::vector<Tensor> best_weights_;
  bool warned_ = false;  // about a missing monitor value, once
};

}  // namespace drun::train

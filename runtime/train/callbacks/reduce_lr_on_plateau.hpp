// ReduceLROnPlateau (keras.callbacks.ReduceLROnPlateau): multiplies the
// learning rate by `factor` (not below min_lr) once the monitored value has
// not improved for `patience` epochs, then waits `cooldown` epochs before
// counting again; Keras 3's rules and arithmetic (the rate a float32, the
// product in double).
#pragma once
#include <optional>

#include "train/callbacks/callback.hpp"
#include "train/callbacks/monitor.hpp"

namespace drun::train {

class ReduceLROnPlateau final : public Callback {
 public:
  explicit ReduceLROnPlateau(Options& o);
  std::string name() const override { return "ReduceLROnPlateau"; }
  void epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) override;
  json state() const override;
  void set_state(const json& state) override;

 private:
  Monitor monitor_;
  double factor_;
  int64_t patience_, verbose_, cooldown_;
  double min_lr_;
  int64_t wait_ = 0, cooldown_counter_ = 0;
  std::optional<double> best_;
  bool warned_ = false;
};

}  // namespace drun::train

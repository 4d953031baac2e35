// Keras' MonitorCallback rules, which EarlyStopping, ReduceLROnPlateau and
// ModelCheckpoint share: mode min, max or auto (a loss or an error
// decreases, an accuracy increases), and `current` improves on `reference`
// when current - min_delta < reference (min) or current - min_delta >
// reference (max), min_delta's sign turned to favour the mode, exactly as
// Keras' _is_improvement computes it (in double, as Python's floats).
#pragma once
#include <optional>
#include <string>

namespace drun::train {

class Monitor {
 public:
  // UsageError naming `who` for a mode other than auto, min and max, or an
  // auto mode for a name whose direction is unknown.
  Monitor(const std::string& who, std::string monitor, const std::string& mode, double min_delta);
  const std::string& name() const { return monitor_; }
  bool improves(double current, std::optional<double> reference) const;

 private:
  std::string monitor_;
  bool lower_is_better_;
  double min_delta_;  // signed as Keras' after _set_monitor_op
};

}  // namespace drun::train

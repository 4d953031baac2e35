#include "train/callbacks/monitor.hpp"

#include <cmath>

#include "base/options.hpp"

namespace drun::train {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Keras' auto mode asks the metric for its direction; drun's metrics answer here.
std::optional<bool> lower_is_better(std::string metric) {
  if (metric.rfind("val_", 0) == 0) metric = metric.substr(4);
  if (metric == "loss" || ends_with(metric, "_loss") || ends_with(metric, "error") ||
      metric == "mse" || metric == "mae")
    return true;
  if (metric.find("acc") != std::string::npos || metric.find("auc") != std::string::npos ||
      metric.find("precision") != std::string::npos || metric.find("recall") != std::string::npos ||
      metric.find("f1") != std::string::npos)
    return false;
  return std::nullopt;
}

}  // namespace

Monitor::Monitor(const std::string& who, std::string monitor, const std::string& mode,
                 double min_delta)
    : monitor_(std::move(monitor)), min_delta_(std::fabs(min_delta)) {
  if (mode == "min" || mode == "max") {
    lower_is_better_ = mode == "min";
  } else if (mode == "auto") {
    const auto lower = lower_is_better(monitor_);
    if (!lower)
      throw UsageError(who + ": cannot tell whether monitor '" + monitor_ +
                       "' should be minimised or maximised; give mode = 'min' or 'max'");
    lower_is_better_ = *lower;
  } else {
    throw UsageError(who + ": mode must be 'auto', 'min' or 'max', got '" + mode + "'");
  }
  if (lower_is_better_) min_delta_ = -min_delta_;
}

bool Monitor::improves(double current, std::optional<double> reference) const {
  if (!reference) return true;
  return lower_is_better_ ? current - min_delta_ < *reference : current - min_delta_ > *reference;
}

}  // namespace drun::train

#include "train/callbacks/early_stopping.hpp"

#include <cstdio>

#include "train/callbacks/callback_registry.hpp"

namespace drun::train {

const CallbackInfo& early_stopping_callback() {
  static const CallbackInfo info{
      {{"EarlyStopping"},
       "stops training when the monitored value has stopped improving",
       {{"monitor", OptionType::string, "val_loss", "the value to watch (a logs name)"},
        {"min_delta", OptionType::number, 0.0, "the least change that counts as an improvement"},
        {"patience", OptionType::integer, 0, "epochs without improvement before stopping"},
        {"verbose", OptionType::integer, 0, "1: say when it stops and restores"},
        {"mode", OptionType::string, "auto", "'min', 'max' or 'auto' (from the monitor's name)"},
        {"baseline", OptionType::number, nullptr,
         "a value to beat: the wait resets only on improvements beyond it"},
        {"restore_best_weights", OptionType::boolean, false,
         "at the end, restore the weights of the best epoch"},
        {"start_from_epoch", OptionType::integer, 0, "epochs to wait before watching"}}},
      [](Options& o) { return std::make_unique<EarlyStopping>(o); }};
  return info;
}

EarlyStopping::EarlyStopping(Options& o)
    : monitor_("EarlyStopping", o.get<std::string>("monitor"), o.get<std::string>("mode"),
               o.get<double>("min_delta")),
      patience_(o.get<int64_t>("patience")),
      verbose_(o.get<int64_t>("verbose")),
      start_from_epoch_(o.get<int64_t>("start_from_epoch")),
      baseline_(o.maybe<double>("baseline")),
      restore_best_weights_(o.get<bool>("restore_best_weights")) {
  if (patience_ < 0)
    throw UsageError("EarlyStopping: patience must not be negative, got " +
                     std::to_string(patience_));
  if (start_from_epoch_ < 0)
    throw UsageError("EarlyStopping: start_from_epoch must not be negative, got " +
                     std::to_string(start_from_epoch_));
}

// Keras 3's EarlyStopping.on_epoch_end, line for line.
void EarlyStopping::epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) {
  const auto current = logs.get(monitor_.name());
  if (!current) {
    if (!warned_ && c.chief())
      std::fprintf(stderr,
                   "drun: warning: EarlyStopping monitors '%s', which is not in the logs (%s)\n",
                   monitor_.name().c_str(), logs.names().c_str());
    warned_ = true;
    return;
  }
  if (epoch < start_from_epoch_) return;
  if (restore_best_weights_ && best_weights_.empty()) {
    best_weights_ = c.weights();
    best_epoch_ = epoch;
  }
  ++wait_;
  if (monitor_.improves(*current, best_)) {
    best_ = *current;
    best_epoch_ = epoch;
    if (restore_best_weights_) best_weights_ = c.weights();
    if (!baseline_ || monitor_.improves(*current, baseline_)) wait_ = 0;
    return;
  }
  if (wait_ >= patience_ && epoch > 0) {
    stopped_epoch_ = epoch;
    c.stop_training();
  }
}

void EarlyStopping::train_end(CallbackControl& c) {
  if (stopped_epoch_ > 0 && verbose_ > 0 && c.chief())
    std::printf("Epoch %lld: early stopping\n", static_cast<long long>(stopped_epoch_ + 1));
  if (!restore_best_weights_ || best_weights_.empty()) return;
  if (verbose_ > 0 && c.chief())
    std::printf("Restoring model weights from the end of the best epoch: %lld.\n",
                static_cast<long long>(best_epoch_ + 1));
  c.set_weights(best_weights_);
}

json EarlyStopping::state() const {
  return {{"wait", wait_},
          {"stopped_epoch", stopped_epoch_},
          {"best_epoch", best_epoch_},
          {"best", best_ ? json(*best_) : json(nullptr)}};
}

void EarlyStopping::set_state(const json& s) {
  wait_ = s.value("wait", int64_t{0});
  stopped_epoch_ = s.value("stopped_epoch", int64_t{0});
  best_epoch_ = s.value("best_epoch", int64_t{0});
  best_.reset();
  if (s.contains("best") && s["best"].is_number()) best_ = s["best"].get<double>();
}

std::vector<std::pair<std::string, Tensor>> EarlyStopping::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < best_weights_.size(); ++i)
    out.emplace_back("best_weights/" + std::to_string(i), best_weights_[i]);
  return out;
}

void EarlyStopping::set_state_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors) {
  // By index: the checkpoint may list them in another order.
  const std::string prefix = "best_weights/";
  best_weights_.clear();
  for (const auto& [name, t] : tensors) {
    if (name.rfind(prefix, 0) != 0) continue;
    const auto i = static_cast<size_t>(std::stoul(name.substr(prefix.size())));
    if (best_weights_.size() <= i) best_weights_.resize(i + 1);
    best_weights_[i] = t;
  }
}

}  // namespace drun::train

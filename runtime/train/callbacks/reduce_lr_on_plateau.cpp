#include "train/callbacks/reduce_lr_on_plateau.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "train/callbacks/callback_registry.hpp"

namespace drun::train {

const CallbackInfo& reduce_lr_on_plateau_callback() {
  static const CallbackInfo info{
      {{"ReduceLROnPlateau"},
       "reduces the learning rate when the monitored value has stopped improving",
       {{"monitor", OptionType::string, "val_loss", "the value to watch (a logs name)"},
        {"factor", OptionType::number, 0.1, "new rate = rate * factor (below 1)"},
        {"patience", OptionType::integer, 10, "epochs without improvement before reducing"},
        {"verbose", OptionType::integer, 0, "1: print each reduction"},
        {"mode", OptionType::string, "auto", "'min', 'max' or 'auto' (from the monitor's name)"},
        {"min_delta", OptionType::number, 1e-4, "the least change that counts as an improvement"},
        {"cooldown", OptionType::integer, 0, "epochs to wait after a reduction"},
        {"min_lr", OptionType::number, 0.0, "the rate's lower bound"}}},
      [](Options& o) { return std::make_unique<ReduceLROnPlateau>(o); }};
  return info;
}

ReduceLROnPlateau::ReduceLROnPlateau(Options& o)
    : monitor_("ReduceLROnPlateau", o.get<std::string>("monitor"), o.get<std::string>("mode"),
               o.get<double>("min_delta")),
      factor_(o.get<double>("factor")),
      patience_(o.get<int64_t>("patience")),
      verbose_(o.get<int64_t>("verbose")),
      cooldown_(o.get<int64_t>("cooldown")),
      min_lr_(o.get<double>("min_lr")) {
  if (factor_ >= 1.0)
    throw UsageError(fmt::format(
        "ReduceLROnPlateau does not support a factor >= 1.0, got factor = {}", factor_));
  if (patience_ < 0 || cooldown_ < 0)
    throw UsageError("ReduceLROnPlateau: patience and cooldown must not be negative, got " +
                     std::to_string(patience_) + " and " + std::to_string(cooldown_));
}

// Keras 3's ReduceLROnPlateau.on_epoch_end, line for line.
void ReduceLROnPlateau::epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) {
  const auto current = logs.get(monitor_.name());
  if (!current) {
    if (!warned_ && c.chief())
      std::fprintf(stderr,
                   "drun: warning: ReduceLROnPlateau monitors '%s', which is not in the logs "
                   "(%s)\n",
                   monitor_.name().c_str(), logs.names().c_str());
    warned_ = true;
    return;
  }
  const bool in_cooldown = cooldown_counter_ > 0;
  if (in_cooldown) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (monitor_.improves(*current, best_)) {
    best_ = *current;
    wait_ = 0;
    return;
  }
  if (cooldown_counter_ > 0) return;
  ++wait_;
  if (wait_ < patience_) return;
  // Keras compares the float32 rate with min_lr as a float32.
  const double old_lr = c.learning_rate();
  if (!(old_lr > static_cast<double>(static_cast<float>(min_lr_)))) return;
  const double new_lr = std::max(old_lr * factor_, min_lr_);
  c.set_learning_rate(new_lr);
  if (verbose_ > 0 && c.chief())
    std::printf("Epoch %lld: ReduceLROnPlateau reducing learning rate to %g.\n",
                static_cast<long long>(epoch + 1), new_lr);
  cooldown_counter_ = cooldown_;
  wait_ = 0;
}

json ReduceLROnPlateau::state() const {
  return {{"wait", wait_},
          {"cooldown_counter", cooldown_counter_},
          {"best", best_ ? json(*best_) : json(nullptr)}};
}

void ReduceLROnPlateau::set_state(const json& s) {
  wait_ = s.value("wait", int64_t{0});
  cooldown_counter_ = s.value("cooldown_counter", int64_t{0});
  best_.reset();
  if (s.contains("best") && s["best"].is_number()) best_ = s["best"].get<double>();
}

}  // namespace drun::train

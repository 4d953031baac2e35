#include "train/callbacks/model_checkpoint.hpp"

#include <fmt/args.h>
#include <fmt/format.h>

#include <cstdio>

#include "train/callbacks/callback_registry.hpp"

namespace drun::train {

const CallbackInfo& model_checkpoint_callback() {
  static const CallbackInfo info{
      {{"ModelCheckpoint"},
       "saves the model (or its weights) as a Keras .h5 after each epoch, or only the best",
       {{"filepath", OptionType::string, kRequired,
         "where to save; may hold {epoch} and logs fields, e.g. '{epoch:02d}-{val_loss:.4f}.h5'"},
        {"monitor", OptionType::string, "val_loss", "the value save_best_only watches"},
        {"verbose", OptionType::integer, 0, "1: say what is saved"},
        {"save_best_only", OptionType::boolean, false,
         "save only when the monitored value improves"},
        {"save_weights_only", OptionType::boolean, false, "the weights only, not the model"},
        {"mode", OptionType::string, "auto", "'min', 'max' or 'auto' (from the monitor's name)"},
        {"save_freq", OptionType::string, "epoch", "'epoch' (the only one drun has)"},
        {"initial_value_threshold", OptionType::number, nullptr,
         "the best value to start from (save_best_only)"}},
       {"filepath"}},
      [](Options& o) { return std::make_unique<ModelCheckpoint>(o); }};
  return info;
}

ModelCheckpoint::ModelCheckpoint(Options& o)
    : filepath_(o.get<std::string>("filepath")),
      monitor_("ModelCheckpoint", o.get<std::string>("monitor"), o.get<std::string>("mode"), 0.0),
      verbose_(o.get<int64_t>("verbose")),
      save_best_only_(o.get<bool>("save_best_only")),
      save_weights_only_(o.get<bool>("save_weights_only")),
      best_(o.maybe<double>("initial_value_threshold")) {
  const auto freq = o.get<std::string>("save_freq");
  if (freq != "epoch")
    throw UsageError("ModelCheckpoint: save_freq must be 'epoch' (the only one drun has), got '" +
                     freq + "'");
  if (filepath_.empty()) throw UsageError("ModelCheckpoint: filepath must not be empty");
}

std::string ModelCheckpoint::path_for(int64_t epoch, const Logs& logs) const {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  args.push_back(fmt::arg("epoch", epoch + 1));
  for (const auto& [k, v] : logs.values) args.push_back(fmt::arg(k.c_str(), v));
  try {
    return fmt::vformat(filepath_, args);
  } catch (const fmt::format_error& e) {
    throw UsageError("ModelCheckpoint: cannot format filepath '" + filepath_ + "' (" + e.what() +
                     "); its fields may be epoch and " + logs.names());
  }
}

// Keras 3's ModelCheckpoint._save_model at an epoch's end.
void ModelCheckpoint::epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) {
  const std::string path = path_for(epoch, logs);
  if (save_best_only_) {
    const auto current = logs.get(monitor_.name());
    if (!current) {
      if (c.chief())
        std::fprintf(stderr,
                     "drun: warning: ModelCheckpoint can save the best model only with %s "
                     "available (the logs have %s); skipping\n",
                     monitor_.name().c_str(), logs.names().c_str());
      return;
    }
    if (!monitor_.improves(*current, best_)) {
      if (verbose_ > 0 && c.chief())
        std::printf("Epoch %lld: %s did not improve from %.5f\n", static_cast<long long>(epoch + 1),
                    monitor_.name().c_str(), *best_);
      return;
    }
    if (verbose_ > 0 && c.chief())
      std::printf("Epoch %lld: %s improved to %.5f, saving model to %s\n",
                  static_cast<long long>(epoch + 1), monitor_.name().c_str(), *current,
                  path.c_str());
    best_ = *current;
  } else if (verbose_ > 0 && c.chief()) {
    std::printf("Epoch %lld: saving model to %s\n", static_cast<long long>(epoch + 1),
                path.c_str());
  }
  if (c.chief()) c.save_model(path, save_weights_only_);
}

json ModelCheckpoint::state() const {
  return {{"best", best_ ? json(*best_) : json(nullptr)}};
}

void ModelCheckpoint::set_state(const json& s) {
  best_.reset();
  if (s.contains("best") && s["best"].is_number()) best_ = s["best"].get<double>();
}

}  // namespace drun::train

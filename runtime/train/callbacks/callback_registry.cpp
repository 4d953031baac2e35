#include "train/callbacks/callback_registry.hpp"

namespace drun::train {

const CallbackInfo& learning_rate_scheduler_callback() {
  static const CallbackInfo info{
      {{"LearningRateScheduler"},
       "sets the learning rate at each epoch's start to schedule(epoch, lr), a Lua function of the "
       "epoch (from 0) and the current rate",
       {{"schedule", OptionType::any, kRequired, "the function (epoch, lr) -> new lr"},
        {"verbose", OptionType::integer, 0, "1: print each new rate"}},
       {"schedule", "verbose"}},
      {}};
  return info;
}

const std::vector<const CallbackInfo*>& callback_registry() {
  static const std::vector<const CallbackInfo*> entries = {
#define DRUN_CALLBACK(id) &id##_callback(),
#include "train/callbacks/callback_list.hpp"
#undef DRUN_CALLBACK
  };
  return entries;
}

std::unique_ptr<Callback> make_callback(const std::string& name, const json& options) {
  const CallbackInfo& info = entry_named(callback_registry(), name, "callback");
  Options o(options, info.about.name(), info.about.schema);
  return info.make ? info.make(o) : nullptr;
}

json describe_callbacks() {
  json out = describe_all(callback_registry());
  for (size_t i = 0; i < out.size(); ++i) out[i]["builtin"] = bool(callback_registry()[i]->make);
  return out;
}

}  // namespace drun::train

// The hook registry, and the entries of the hooks whose behaviour is drun.hooks'
// Lua (LoggingHook, StopAtStepHook, StepCounterHook, FinalOpsHook): their
// options are checked here like every other hook's.
#include "train/hook_registry.hpp"

namespace drun::train {

const HookInfo& logging_hook() {
  static const HookInfo info{
      {{"LoggingHook"},
       "logs the named running values every so many steps (chief only)",
       {{"tensors", OptionType::list, json::array({"loss"}),
         "the names of the values to log (the loss, a metric, learning_rate...)"},
        {"every_n_steps", OptionType::integer, 100, "how often, in steps"}}},
      {}};
  return info;
}

const HookInfo& stop_at_step_hook() {
  static const HookInfo info{
      {{"StopAtStepHook"},
       "stops at a global step, or after a number of steps (give one)",
       {{"last_step", OptionType::integer, nullptr, "the global step to stop at"},
        {"num_steps", OptionType::integer, nullptr, "how many more steps to take"}}},
      {}};
  return info;
}

const HookInfo& step_counter_hook() {
  static const HookInfo info{{{"StepCounterHook"},
                              "logs steps/s and images/s every so many steps (chief only)",
                              {{"every_n_steps", OptionType::integer, 100, "how often, in steps"}}},
                             {}};
  return info;
}

const HookInfo& final_ops_hook() {
  static const HookInfo info{{{"FinalOpsHook"},
                              "calls a function with fit's result once training has ended",
                              {{"fn", OptionType::any, kRequired,
                                "the function; what it returns is kept in the hook's value"}}},
                             {}};
  return info;
}

const std::vector<const HookInfo*>& hook_registry() {
  static const std::vector<const HookInfo*> entries = {
#define DRUN_HOOK(id) &id##_hook(),
#include "train/hook_list.hpp"
#undef DRUN_HOOK
  };
  return entries;
}

std::unique_ptr<Hook> make_hook(const std::string& name, const json& options) {
  const HookInfo& info = entry_named(hook_registry(), name, "hook");
  Options o(options, info.about.name(), info.about.schema);
  return info.make ? info.make(o) : nullptr;
}

json describe_hooks() {
  json out = describe_all(hook_registry());
  for (size_t i = 0; i < out.size(); ++i) out[i]["builtin"] = bool(hook_registry()[i]->make);
  return out;
}

}  // namespace drun::train

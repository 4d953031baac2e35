// The hook registry: one HookInfo per hook a script can ask for by name,
// listed in train/hook_list.hpp. A hook that C++ runs (NanGuard,
// GlobalStepWaiterHook) has a constructor here; the others are Lua's
// (drun.hooks: their behaviour is a script's, or fit options such as
// CheckpointSaverHook's interval), and only their options are checked here.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/registry.hpp"
#include "train/hooks.hpp"

namespace drun::train {

struct HookInfo {
  Described about;
  // Builds the hook from its options, checked against about.schema; empty
  // for a hook without a C++ side.
  std::function<std::unique_ptr<Hook>(Options&)> make;
};

#define DRUN_HOOK(id) const HookInfo& id##_hook();
#include "train/hook_list.hpp"
#undef DRUN_HOOK

// Every hook, in the list's order.
const std::vector<const HookInfo*>& hook_registry();

// Checks `options` against the schema of the hook called `name` and builds
// it where C++ runs it (nullptr otherwise). UsageError for an unknown hook
// (listing them) or a bad option.
std::unique_ptr<Hook> make_hook(const std::string& name, const json& options);

// describe_all(hook_registry()), each entry with "builtin": whether C++ runs it.
json describe_hooks();

}  // namespace drun::train

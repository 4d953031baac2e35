// The callback registry: one CallbackInfo per callback a script can ask for
// by name, listed in train/callbacks/callback_list.hpp. A callback that C++
// runs has a constructor; LearningRateScheduler, whose schedule is a Lua
// function, is drun.callbacks' Lua and only its options are checked here.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/registry.hpp"
#include "train/callbacks/callback.hpp"

namespace drun::train {

struct CallbackInfo {
  Described about;
  // Builds the callback from its options, checked against about.schema;
  // empty for a callback without a C++ side.
  std::function<std::unique_ptr<Callback>(Options&)> make;
};

#define DRUN_CALLBACK(id) const CallbackInfo& id##_callback();
#include "train/callbacks/callback_list.hpp"
#undef DRUN_CALLBACK

// Every callback, in the list's order.
const std::vector<const CallbackInfo*>& callback_registry();

// Checks `options` against the schema of the callback called `name` and
// builds it where C++ runs it (nullptr otherwise). UsageError for an unknown
// callback (listing them) or a bad option.
std::unique_ptr<Callback> make_callback(const std::string& name, const json& options);

// describe_all(callback_registry()), each entry with "builtin": whether C++ runs it.
json describe_callbacks();

}  // namespace drun::train

// Hooks given from Lua: a table with any of begin, before_step, after_step and
// end_ functions becomes a train::Hook whose methods call them (after_step
// gets {step, epoch, loss, learning_rate, metrics = {...}} and returns true to
// stop); a table with _builtin = NAME and _options = {...} becomes the C++
// hook of that name (train/hook_registry.hpp: NanGuard, GlobalStepWaiterHook).
#pragma once
#include <lua.hpp>
#include <memory>
#include <vector>

#include "train/hooks.hpp"

namespace drun::lua {

// The hooks in the Lua array at `index` (nil: none). They refer to Lua values
// and live no longer than the call that made them.
std::vector<std::unique_ptr<train::Hook>> hooks_from_lua(lua_State* L, int index);

}  // namespace drun::lua

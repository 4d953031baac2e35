// The C module `drun.core` (registered in package.preload): models, data sets
// and trainers as userdata, and the process's context. Each part registers
// its type and functions into the module's table; the pure-Lua module `drun`
// builds the user-facing API on top of them.
#pragma once
#include <lua.hpp>

#include "train/run_fit.hpp"

namespace drun::lua {

int open_core(lua_State* L);

// Userdata type names (metatables in the registry).
inline constexpr const char* kModel = "drun.Model";
inline constexpr const char* kDataset = "drun.Dataset";
inline constexpr const char* kTrainer = "drun.Trainer";

// Each defines its userdata type and sets its functions in the table on top
// of the stack (the module).
void register_models(lua_State* L);
void register_datasets(lua_State* L);
void register_trainers(lua_State* L);
void register_registries(lua_State* L);

// The data set at `ds_index` and the list of pipeline ops at `ops_index` (nil: none).
train::Input input_arg(lua_State* L, int ds_index, int ops_index);

// {d1, d2, ...} for a shape.
void push_shape(lua_State* L, const Shape& s);

}  // namespace drun::lua

// Lua tables <-> JSON values. Options travel from Lua to C++ as JSON so that
// all validation happens in C++, where unit tests reach it.
#pragma once
#include <lua.hpp>

#include "base/options.hpp"

namespace drun::lua {

// A table whose keys are exactly 1..n becomes an array, any other table an
// object; integral numbers become integers. Functions, userdata and threads
// cannot be options: UsageError naming the key path.
json to_json(lua_State* L, int index, const std::string& path = "");
void push_json(lua_State* L, const json& value);

}  // namespace drun::lua

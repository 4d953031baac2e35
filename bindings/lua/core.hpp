// Entry point of the `drun.core` C module (registered in package.preload).
#pragma once
#include <lua.hpp>

namespace drun::lua {
int open_core(lua_State* L);
}

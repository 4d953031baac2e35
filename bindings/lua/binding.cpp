#include "binding.hpp"

#include <cstring>

namespace drun::lua {

namespace {
const char* const kContextKey = "drun.context";
}

void register_context(lua_State* L, train::Context* ctx) {
  lua_pushlightuserdata(L, ctx);
  lua_setfield(L, LUA_REGISTRYINDEX, kContextKey);
}

train::Context& context(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kContextKey);
  auto* ctx = static_cast<train::Context*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  if (!ctx) throw std::logic_error("drun.core used without a runtime context");
  return *ctx;
}

std::string user_location(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kContextKey);
  auto* ctx = static_cast<train::Context*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  const std::string root = ctx ? ctx->module_root : std::string();
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0 || ar.source[0] != '@') continue;
    const char* file = ar.source + 1;
    if (!root.empty() && std::strncmp(file, root.c_str(), root.size()) == 0) continue;
    return std::string(file) + ":" + std::to_string(ar.currentline) + ": ";
  }
  return "";
}

}  // namespace drun::lua

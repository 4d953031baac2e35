// Helpers shared by the binding files: C++ objects as Lua userdata, and the
// edge where C++ exceptions become Lua errors that name the user's script
// file and line.
#pragma once
#include <exception>
#include <lua.hpp>
#include <memory>
#include <string>

#include "train/context.hpp"

namespace drun::lua {

// The runtime context main registered with register_context().
train::Context& context(lua_State* L);
void register_context(lua_State* L, train::Context* ctx);

// "script.lua:12: " for the innermost frame of the user's script (not drun's
// own Lua modules), or "" when there is none.
std::string user_location(lua_State* L);

// Runs f (which returns the number of Lua results); any C++ exception becomes
// a Lua error carrying the user's location. No C++ object of this frame is
// alive when lua_error unwinds, which PUC Lua's longjmp requires.
template <class F>
int guarded(lua_State* L, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    const std::string msg = user_location(L) + e.what();
    lua_pushstring(L, msg.c_str());
  }
  return lua_error(L);
}

// A shared_ptr<T> in a userdata with a metatable named `type_name`.
template <class T>
void push_object(lua_State* L, std::shared_ptr<T> obj, const char* type_name) {
  void* mem = lua_newuserdata(L, sizeof(std::shared_ptr<T>));
  new (mem) std::shared_ptr<T>(std::move(obj));
  luaL_getmetatable(L, type_name);
  lua_setmetatable(L, -2);
}

template <class T>
std::shared_ptr<T>& check_object(lua_State* L, int index, const char* type_name) {
  return *static_cast<std::shared_ptr<T>*>(luaL_checkudata(L, index, type_name));
}

template <class T>
int gc_object(lua_State* L) {
  auto* p = static_cast<std::shared_ptr<T>*>(lua_touserdata(L, 1));
  p->~shared_ptr<T>();
  return 0;
}

// Creates metatable `type_name` with __gc and __index = methods.
template <class T>
void define_type(lua_State* L, const char* type_name, const luaL_Reg* methods) {
  luaL_newmetatable(L, type_name);
  lua_pushcfunction(L, gc_object<T>);
  lua_setfield(L, -2, "__gc");
  lua_newtable(L);
  luaL_register(L, nullptr, methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

}  // namespace drun::lua

// Helpers shared by the binding files: C++ objects as Lua userdata, checked
// arguments, and the one edge where errors become Lua errors that name the
// user's script file and line.
//
// Errors take one path: C++ code in a binding function throws (UsageError,
// or any std::exception), guarded() catches it and raises the Lua error once
// no C++ object of the function is alive, which PUC Lua's longjmp requires.
// So inside guarded() nothing may raise a Lua error itself: arguments are
// read with the throwing arg_* helpers below, never luaL_check* / luaL_opt*;
// fields that a metamethod could provide with get_field; Lua functions are
// called with lua_pcall. (The Lua API's own out-of-memory errors remain.)
// PUC Lua 5.1 is linked as lua5.1-c++, whose errors are thrown as a pointer,
// not a std::exception: catch (...) around Lua API calls would swallow them.
#pragma once
#include <exception>
#include <lua.hpp>
#include <memory>
#include <string>

#include "base/options.hpp"
#include "train/context.hpp"
#include "train/preemption.hpp"

namespace drun::lua {

// The runtime context main registered with register_context().
train::Context& context(lua_State* L);
void register_context(lua_State* L, train::Context* ctx);

// "script.lua:12: " for the innermost frame of the user's script (not drun's
// own Lua modules), or "" when there is none.
std::string user_location(lua_State* L);

// An error that ends the script with an exit code of its own and is no fault
// of the script (a preempted fit): the table {message = ..., exit_code = N},
// whose tostring is the message. run_script reports it in one line, without
// location or traceback, and exits with its code.
void push_exit_error(lua_State* L, const char* message, int exit_code);
// The message of such an error at `index` (its code in *exit_code), or null.
const char* exit_error(lua_State* L, int index, int* exit_code);

// A usage error (a bad option name, value or shape in a description the
// script wrote) stays a string, so that a script's pcall can read it as any
// error; the state remembers the last one, so that run_script recognises it
// when it ends the script and prints it in one line, without a traceback,
// exit 2. push_usage_error pushes `message` and remembers it.
void push_usage_error(lua_State* L, const std::string& message);
// Whether the error value at `index` is the usage error raised last.
bool is_usage_error(lua_State* L, int index);

// Runs f (which returns the number of Lua results); any C++ exception becomes
// a Lua error carrying the user's location (a preempted fit: an exit error).
// The message is built and pushed in a scope that ends before lua_error, so
// no C++ object is alive when it unwinds.
template <class F>
int guarded(lua_State* L, F&& f) {
  try {
    return f();
  } catch (const train::Preempted& e) {
    push_exit_error(L, e.what(), e.exit_code());
  } catch (const UsageError& e) {
    push_usage_error(L, user_location(L) + e.what());
  } catch (const std::exception& e) {
    const std::string msg = user_location(L) + e.what();
    lua_pushstring(L, msg.c_str());
  }
  return lua_error(L);
}

// Arguments, checked by throwing UsageError naming `what` and what was
// given. Strings accept numbers (as Lua does); opt_* take nil or none as absent.
std::string arg_string(lua_State* L, int index, const char* what);
double arg_number(lua_State* L, int index, const char* what);
double opt_number(lua_State* L, int index, double fallback, const char* what);
void arg_table(lua_State* L, int index, const char* what);

// Pushes t[key] for the table t at `index`, read in a protected call (an
// __index metamethod may raise): UsageError with the Lua error's message.
void get_field(lua_State* L, int index, const char* key);

// The userdata at `index` if its metatable is `type_name`'s, else null.
void* test_userdata(lua_State* L, int index, const char* type_name);

// A shared_ptr<T> in a userdata with a metatable named `type_name`.
template <class T>
void push_object(lua_State* L, std::shared_ptr<T> obj, const char* type_name) {
  void* mem = lua_newuserdata(L, sizeof(std::shared_ptr<T>));
  new (mem) std::shared_ptr<T>(std::move(obj));
  luaL_getmetatable(L, type_name);
  lua_setmetatable(L, -2);
}

// The object at `index`; UsageError unless it is a `type_name`.
template <class T>
std::shared_ptr<T>& arg_object(lua_State* L, int index, const char* type_name) {
  void* p = test_userdata(L, index, type_name);
  if (!p)
    throw UsageError("argument #" + std::to_string(index) + ": expected a " + type_name + ", got " +
                     luaL_typename(L, index));
  return *static_cast<std::shared_ptr<T>*>(p);
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

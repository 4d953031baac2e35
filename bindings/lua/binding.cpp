#include "binding.hpp"

#include <cstring>

namespace drun::lua {

namespace {
const char* const kContextKey = "drun.context";
const char* const kExitErrorType = "drun.exit_error";
const char* const kUsageErrorKey = "drun.usage_error";

// (t, key) -> t[key], for get_field's protected call.
int index_table(lua_State* L) {
  lua_gettable(L, 1);
  return 1;
}

// An exit error's __tostring: its message (print(err) in a script's pcall).
int exit_error_message(lua_State* L) {
  lua_pushliteral(L, "message");
  lua_rawget(L, 1);
  return 1;
}

[[noreturn]] void bad_argument(lua_State* L, int index, const char* what, const char* expected) {
  throw UsageError(std::string(what) + ": expected " + expected + ", got " +
                   luaL_typename(L, index));
}
}  // namespace

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

void push_exit_error(lua_State* L, const char* message, int exit_code) {
  lua_createtable(L, 0, 2);
  lua_pushstring(L, message);
  lua_setfield(L, -2, "message");
  lua_pushinteger(L, exit_code);
  lua_setfield(L, -2, "exit_code");
  if (luaL_newmetatable(L, kExitErrorType)) {
    lua_pushcfunction(L, exit_error_message);
    lua_setfield(L, -2, "__tostring");
  }
  lua_setmetatable(L, -2);
}

const char* exit_error(lua_State* L, int index, int* exit_code) {
  if (index < 0 && index > LUA_REGISTRYINDEX) index = lua_gettop(L) + index + 1;
  if (!lua_istable(L, index) || !lua_getmetatable(L, index)) return nullptr;
  luaL_getmetatable(L, kExitErrorType);
  const bool ours = lua_rawequal(L, -1, -2) != 0;
  lua_pop(L, 2);
  if (!ours) return nullptr;
  lua_getfield(L, index, "exit_code");
  *exit_code = static_cast<int>(lua_tointeger(L, -1));
  lua_getfield(L, index, "message");
  const char* message = lua_tostring(L, -1);  // stays alive: the table holds the string
  lua_pop(L, 2);
  return message;
}

void push_usage_error(lua_State* L, const std::string& message) {
  lua_pushstring(L, message.c_str());
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kUsageErrorKey);
}

bool is_usage_error(lua_State* L, int index) {
  if (index < 0 && index > LUA_REGISTRYINDEX) index = lua_gettop(L) + index + 1;
  if (lua_type(L, index) != LUA_TSTRING) return false;
  lua_getfield(L, LUA_REGISTRYINDEX, kUsageErrorKey);
  const bool same = lua_rawequal(L, index, -1) != 0;
  lua_pop(L, 1);
  return same;
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

std::string arg_string(lua_State* L, int index, const char* what) {
  size_t n = 0;
  // A number is a string too (lua_tolstring converts it in place).
  const char* s = lua_isstring(L, index) ? lua_tolstring(L, index, &n) : nullptr;
  if (!s) bad_argument(L, index, what, "a string");
  return std::string(s, n);
}

double arg_number(lua_State* L, int index, const char* what) {
  if (!lua_isnumber(L, index)) bad_argument(L, index, what, "a number");
  return static_cast<double>(lua_tonumber(L, index));
}

double opt_number(lua_State* L, int index, double fallback, const char* what) {
  return lua_isnoneornil(L, index) ? fallback : arg_number(L, index, what);
}

void arg_table(lua_State* L, int index, const char* what) {
  if (!lua_istable(L, index)) bad_argument(L, index, what, "a table");
}

void get_field(lua_State* L, int index, const char* key) {
  if (index < 0 && index > LUA_REGISTRYINDEX) index = lua_gettop(L) + index + 1;
  lua_pushcfunction(L, index_table);
  lua_pushvalue(L, index);
  lua_pushstring(L, key);
  if (lua_pcall(L, 2, 1, 0) != 0) {
    std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)";
    lua_pop(L, 1);
    throw UsageError("reading field '" + std::string(key) + "': " + msg);
  }
}

void* test_userdata(lua_State* L, int index, const char* type_name) {
  void* p = lua_touserdata(L, index);
  if (!p || !lua_getmetatable(L, index)) return nullptr;
  luaL_getmetatable(L, type_name);
  const bool same = lua_rawequal(L, -1, -2) != 0;
  lua_pop(L, 2);
  return same ? p : nullptr;
}

}  // namespace drun::lua

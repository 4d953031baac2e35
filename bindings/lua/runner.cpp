#include "runner.hpp"

#include <cstdio>
#include <lua.hpp>
#include <memory>

#include "binding.hpp"
#include "core.hpp"

namespace drun::lua {

namespace {

// A usage error (drun.util.usage_error: a bad command-line option) is a table
// {usage = message}: the user's code is not at fault, so it gets no traceback.
// So does a bad description the script wrote (is_usage_error): its message
// names the script's line already.
const char* usage_message(lua_State* L, int index) {
  if (!lua_istable(L, index)) return nullptr;
  lua_getfield(L, index, "usage");
  const char* msg = lua_tostring(L, -1);  // stays alive: the table holds the string
  lua_pop(L, 1);
  return msg;
}

// Message handler: appends a traceback to the error (as lua.c does). Through
// debug.traceback, not luaL_traceback: PUC Lua 5.1's C API has no such call.
int traceback(lua_State* L) {
  int code = 0;
  if (usage_message(L, 1) || is_usage_error(L, 1) || exit_error(L, 1, &code)) return 1;
  if (!lua_tostring(L, 1)) {
    lua_pushliteral(L, "(error object is not a string)");
    lua_replace(L, 1);
  }
  lua_getglobal(L, "debug");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_settop(L, 1);
    return 1;
  }
  lua_getfield(L, -1, "traceback");
  if (!lua_isfunction(L, -1)) {
    lua_settop(L, 1);
    return 1;
  }
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 2);  // level 2: above this handler and debug.traceback itself
  lua_call(L, 2, 1);
  return 1;
}

// print() with upvalues (the original print, a prefix): prefix .. first arg.
int prefixed_print(lua_State* L) {
  const int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  if (n > 0) {
    lua_getglobal(L, "tostring");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_concat(L, 2);
  }
  for (int i = 2; i <= n; ++i) lua_pushvalue(L, i);
  lua_call(L, n > 0 ? n : 1, 0);
  return 0;
}

struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};

// What setup() puts into a fresh state, prepared in C++ beforehand.
struct Setup {
  train::Context* ctx;
  const char* package_path;  // prepended to package.path
  const char* script;
  const std::vector<std::string>* args;
  const char* print_prefix;  // null: print() unchanged
};

// Runs under lua_cpcall, so that a Lua error (out of memory) is caught; it
// creates no C++ object that a longjmp would skip.
int setup(lua_State* L) {
  const auto* s = static_cast<const Setup*>(lua_touserdata(L, 1));
  luaL_openlibs(L);
  register_context(L, s->ctx);

  lua_getglobal(L, "package");
  lua_pushstring(L, s->package_path);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, open_core);
  lua_setfield(L, -2, "drun.core");
  lua_pop(L, 2);

  lua_createtable(L, static_cast<int>(s->args->size()), 1);
  lua_pushstring(L, s->script);
  lua_rawseti(L, -2, 0);
  for (size_t i = 0; i < s->args->size(); ++i) {
    lua_pushstring(L, (*s->args)[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setglobal(L, "arg");

  // On ranks other than the chief, print() lines carry the rank and role.
  if (s->print_prefix) {
    lua_getglobal(L, "print");
    lua_pushstring(L, s->print_prefix);
    lua_pushcclosure(L, prefixed_print, 2);
    lua_setglobal(L, "print");
  }
  return 0;
}

}  // namespace

int run_script(train::Context& ctx, const std::string& script,
               const std::vector<std::string>& args) {
  std::unique_ptr<lua_State, StateCloser> state(luaL_newstate());
  lua_State* L = state.get();
  if (!L) {
    std::fprintf(stderr, "drun: cannot create a Lua state (out of memory)\n");
    return 1;
  }
  // package.path: drun's modules, the model zoo, the script's folder, then the default.
  const std::string dir = script.find('/') == std::string::npos
                              ? std::string(".")
                              : script.substr(0, script.rfind('/'));
  const std::string path = ctx.module_root + "/?.lua;" + ctx.module_root + "/?/init.lua;" +
                           ctx.models_root + "/?.lua;" + dir + "/?.lua;";
  const std::string prefix = ctx.label.empty() ? "" : "[" + ctx.label + "] ";
  Setup s{&ctx, path.c_str(), script.c_str(), &args, prefix.empty() ? nullptr : prefix.c_str()};
  if (lua_cpcall(L, setup, &s) != 0) {
    std::fprintf(stderr, "drun: cannot set up Lua: %s\n",
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
    return 1;
  }

  lua_pushcfunction(L, traceback);
  int status = luaL_loadfile(L, script.c_str());
  if (status == 0) {
    for (const auto& a : args) lua_pushstring(L, a.c_str());
    status = lua_pcall(L, static_cast<int>(args.size()), 0, -static_cast<int>(args.size()) - 2);
  }
  if (status != 0) {
    std::fflush(stdout);
    const std::string who = ctx.label.empty() ? "" : "[" + ctx.label + "] ";
    const char* usage = usage_message(L, -1);
    if (!usage && is_usage_error(L, -1)) usage = lua_tostring(L, -1);
    if (usage) {
      std::fprintf(stderr, "drun: %s%s\n", who.c_str(), usage);
      return kUsageExitCode;
    }
    int code = 1;
    if (const char* message = exit_error(L, -1, &code)) {  // a preempted fit
      std::fprintf(stderr, "drun: %s%s\n", who.c_str(), message);
      return code;
    }
    const char* msg = lua_tostring(L, -1);
    std::fprintf(stderr, "drun: %s%s\n", who.c_str(), msg ? msg : "(error object is not a string)");
    return 1;
  }
  return 0;
}

const char* interpreter() {
#ifdef LUAJIT_VERSION  // LuaJIT's lua.hpp includes luajit.h
  return LUAJIT_VERSION;
#else
  return "PUC " LUA_RELEASE;
#endif
}

}  // namespace drun::lua

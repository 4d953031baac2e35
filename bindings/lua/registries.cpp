// drun.core's registries (train/registries.hpp), from which the Lua modules
// make their constructors: core.registry(kind) lists a kind's entries, and
// core.check(kind, name, options) checks a description where the script makes
// it, so that a mistake is reported at the line that made it. The checks are
// the runtime's own: nothing is validated twice. core.did_you_mean(name, names)
// gives the Lua modules' own messages the runtime's near-miss suggestion.
#include "train/registries.hpp"

#include "base/did_you_mean.hpp"
#include "binding.hpp"
#include "core.hpp"
#include "lua_json.hpp"

namespace drun::lua {

namespace {

const train::RegistryKind& kind_arg(lua_State* L) {
  try {
    return train::registry_kind(arg_string(L, 1, "registry kind"));
  } catch (const UsageError& e) {
    throw UsageError(std::string("core.registry: ") + e.what());
  }
}

// core.registry(kind) -> {{names, doc, options = {{name, type, default, doc, required}},
// positional, ...}}
int registry_list(lua_State* L) {
  return guarded(L, [&] {
    push_json(L, kind_arg(L).describe());
    return 1;
  });
}

// The options at `index` as the check sees them: a value that is no JSON
// (fit's data sets and hooks, FinalOpsHook's function) stands as the string
// "<function>", "<table>"..., so that its key is checked and a schema that
// takes such a value (of type any) sees it given; where it is used, the Lua
// module passes it on as the object it is.
json checked_options(lua_State* L, int index) {
  // A conversion that fails leaves what it was reading on the stack.
  const int top = lua_gettop(L);
  try {
    return to_json(L, index, "options");
  } catch (const UsageError&) {
    if (!lua_istable(L, index)) throw;
    lua_settop(L, top);
  }
  json out = json::object();
  lua_pushnil(L);
  while (lua_next(L, index)) {
    if (lua_type(L, -2) != LUA_TSTRING && lua_type(L, -2) != LUA_TNUMBER) {
      lua_pop(L, 2);
      throw UsageError("option table 'options' has a key that is not a string");
    }
    // A copy of the key: lua_tostring would turn a number key into a string in place.
    lua_pushvalue(L, -2);
    const std::string k = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (!k.empty() && k[0] == '_') {  // the Lua side's own bookkeeping, as to_json skips it
      lua_pop(L, 1);
      continue;
    }
    const int value = lua_gettop(L);
    try {
      out[k] = to_json(L, value, k);
    } catch (const UsageError&) {
      lua_settop(L, value);
      out[k] = std::string("<") + luaL_typename(L, value) + ">";
    }
    lua_pop(L, 1);
  }
  return out;
}

// core.check(kind, name, options): raises the runtime's error for a bad description.
int registry_check(lua_State* L) {
  return guarded(L, [&] {
    const train::RegistryKind& kind = kind_arg(L);
    kind.check(arg_string(L, 2, "name"), checked_options(L, 3));
    return 0;
  });
}

// core.did_you_mean(name, {names}) -> " (did you mean 'x'?)" or "".
int registry_did_you_mean(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = arg_string(L, 1, "name");
    arg_table(L, 2, "names");
    std::vector<std::string> names;
    const int n = static_cast<int>(lua_objlen(L, 2));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, 2, i);
      if (lua_type(L, -1) == LUA_TSTRING) names.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    const std::string text = did_you_mean(name, names);
    lua_pushstring(L, text.c_str());
    return 1;
  });
}

const luaL_Reg registry_functions[] = {{"registry", registry_list},
                                       {"check", registry_check},
                                       {"did_you_mean", registry_did_you_mean},
                                       {nullptr, nullptr}};

}  // namespace

void register_registries(lua_State* L) {
  luaL_register(L, nullptr, registry_functions);
}

}  // namespace drun::lua

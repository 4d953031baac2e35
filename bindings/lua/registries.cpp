// drun.core's registries (train/registries.hpp), from which the Lua modules
// make their constructors: core.registry(kind) lists a kind's entries, and
// core.check(kind, name, options) checks a description where the script makes
// it, so that a mistake is reported at the line that made it. The checks are
// the runtime's own: nothing is validated twice.
#include "train/registries.hpp"

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

// core.check(kind, name, options): raises the runtime's error for a bad description.
int registry_check(lua_State* L) {
  return guarded(L, [&] {
    const train::RegistryKind& kind = kind_arg(L);
    kind.check(arg_string(L, 2, "name"), to_json(L, 3, "options"));
    return 0;
  });
}

const luaL_Reg registry_functions[] = {
    {"registry", registry_list}, {"check", registry_check}, {nullptr, nullptr}};

}  // namespace

void register_registries(lua_State* L) {
  luaL_register(L, nullptr, registry_functions);
}

}  // namespace drun::lua

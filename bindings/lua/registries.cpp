// drun.core's registries (base/registry.hpp), from which the Lua modules make
// their constructors: core.registry(kind) lists a kind's entries, and
// core.check(kind, name, options) checks a description where the script makes
// it, so that a mistake is reported at the line that made it. The checks are
// the runtime's own: nothing is validated twice.
#include <functional>
#include <map>

#include "binding.hpp"
#include "core.hpp"
#include "data/pipeline_spec.hpp"
#include "data/reader_registry.hpp"
#include "distributed/strategy_spec.hpp"
#include "lua_json.hpp"
#include "nn/layer_registry.hpp"

namespace drun::lua {

namespace {

struct Kind {
  std::function<json()> describe;
  std::function<void(const std::string& name, const json& options)> check;
};

const std::map<std::string, Kind>& kinds() {
  static const std::map<std::string, Kind> table = {
      {"layers",
       {[] { return describe_all(nn::layer_registry()); },
        [](const std::string& name, const json& options) {
          const auto& info = entry_named(nn::layer_registry(), name, "layer class");
          Options(options, "nn." + name, info.about.schema);
        }}},
      {"strategies",
       {distributed::describe_strategies,
        [](const std::string& name, const json& options) {
          distributed::parse_strategy({{"name", name}, {"options", options}});
        }}},
      {"readers",
       {data::describe_readers,
        [](const std::string& name, const json& options) {
          data::check_reader_options(name, options, "data." + name);
        }}},
      {"pipeline_ops",
       {data::describe_pipeline_ops,
        [](const std::string& name, const json& options) {
          data::check_pipeline_op(name, options, "Dataset:" + name);
        }}},
  };
  return table;
}

const Kind& kind_arg(lua_State* L) {
  const std::string kind = arg_string(L, 1, "registry kind");
  const auto it = kinds().find(kind);
  if (it == kinds().end()) throw UsageError("core.registry: no registry '" + kind + "'");
  return it->second;
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
    const Kind& kind = kind_arg(L);
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

// Every registry a user meets (base/registry.hpp), by kind: what Lua's
// core.registry and core.check serve and what `drun help` prints. A new kind
// of registry adds its line here; a new entry of a kind adds nothing here.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "base/options.hpp"

namespace drun::train {

struct RegistryKind {
  std::string what;                // one entry's kind in messages: "layer", "strategy"
  std::function<json()> describe;  // every entry's {names, doc, options, ...}
  // Throws the runtime's UsageError for a bad description of entry `name`.
  std::function<void(const std::string& name, const json& options)> check;
};

// By the kind's name: "layers", "strategies"...
const std::map<std::string, RegistryKind>& registries();
const RegistryKind& registry_kind(const std::string& kind);

// `drun help`: the kinds and their entries' names; `drun help NAME`: the
// entry (or kind) called NAME, its description and options. Throws
// UsageError for a name no registry knows.
std::string registry_help(const std::string& name);

}  // namespace drun::train

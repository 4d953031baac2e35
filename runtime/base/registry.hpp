// One registry per kind of thing users add (layers, strategies, data readers,
// optimizers, losses, metrics, callbacks), each built as kernels/op_list.hpp
// is for ops: one entry a thing, found by name. An entry's `Described` part is
// what every kind shares: the names (the Keras class first, then aliases), a
// one-line description, the option schema and Keras' positional parameters.
// Lua's constructors, `--help`, the docs lint and the "valid: ..." of errors
// are made from it.
#pragma once
#include <string>
#include <vector>

#include "base/options.hpp"
#include "base/schema.hpp"

namespace drun {

struct Described {
  std::vector<std::string> names;
  std::string doc;
  Schema schema;
  std::vector<std::string> positional;  // nn.Dense(32, 'relu'): units, activation

  const std::string& name() const { return names.front(); }
  bool answers_to(const std::string& n) const;
  // {names, doc, options: [...], positional}, for Lua and the docs.
  json describe() const;
};

// Each entry's `about.schema` with the options every entry of its kind takes.
template <class Entry>
std::vector<Entry> with_common_options(std::vector<Entry> entries, const Schema& common) {
  for (Entry& e : entries) e.about.schema = e.about.schema.with(common);
  return entries;
}

// The list find_entry and describe_all take, of entries that live for the process.
template <class Entry>
std::vector<const Entry*> entry_pointers(const std::vector<Entry>& entries) {
  std::vector<const Entry*> out;
  for (const Entry& e : entries) out.push_back(&e);
  return out;
}

// Every name and alias of `entries`, in registry order, comma-separated.
template <class Entry>
std::string registry_names(const std::vector<const Entry*>& entries) {
  std::string out;
  for (const Entry* e : entries)
    for (const auto& n : e->about.names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The entry called `name` (or an alias of it), else nullptr.
template <class Entry>
const Entry* find_entry(const std::vector<const Entry*>& entries, const std::string& name) {
  for (const Entry* e : entries)
    if (e->about.answers_to(name)) return e;
  return nullptr;
}

// The entry called `name`, else a UsageError "unknown WHAT 'name'; valid: ...".
template <class Entry>
const Entry& entry_named(const std::vector<const Entry*>& entries, const std::string& name,
                         const std::string& what) {
  if (const Entry* e = find_entry(entries, name)) return *e;
  throw UsageError("unknown " + what + " '" + name + "'; valid: " + registry_names(entries));
}

template <class Entry>
json describe_all(const std::vector<const Entry*>& entries) {
  json out = json::array();
  for (const Entry* e : entries) out.push_back(e->about.describe());
  return out;
}

}  // namespace drun

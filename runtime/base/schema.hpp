// The option schema of a registered kind of thing (a layer, a strategy, a data
// reader, an optimizer...): each option's name, type, default and one-line
// description, written once beside the constructor that reads them. Options
// (base/options.hpp) checks a user's table against it; the Lua tables, the
// positional shorthands, `--help`, the unknown-key messages and the API docs
// lint are made from it (base/registry.hpp), so nothing repeats the list.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace drun {

using json = nlohmann::json;

enum class OptionType {
  integer,  // a whole number
  number,   // any number
  boolean,
  string,
  pair,    // a whole number or a list of two (Keras' kernel_size, strides...)
  single,  // a whole number or a list of one (Keras' 1-D kernel_size, strides...)
  list,    // a list
  table,   // a table of key = value
  any,     // checked by the constructor that reads it
};

const char* option_type_name(OptionType t);

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::any;
  json fallback;  // the default; null: none (absent unless the user gives it)
  std::string doc;
  bool required = false;
};

// Marks an option a user must give: {"units", OptionType::integer, kRequired, "..."}.
struct Required {};
inline constexpr Required kRequired{};

struct Schema {
  struct Entry {
    OptionSpec spec;
    Entry(std::string name, OptionType type, json fallback, std::string doc)
        : spec{std::move(name), type, std::move(fallback), std::move(doc), false} {}
    Entry(std::string name, OptionType type, Required, std::string doc)
        : spec{std::move(name), type, json(), std::move(doc), true} {}
  };
  Schema() = default;
  Schema(std::initializer_list<Entry> entries);
  // This schema's options followed by `more`'s (the options every entry of a kind takes).
  Schema with(const Schema& more) const;

  std::vector<OptionSpec> options;
  // Keras' positional parameters, in order: nn.Dense(32, 'relu').
  std::vector<std::string> positional;

  const OptionSpec* find(const std::string& name) const;
  // The names, sorted, comma-separated: what "valid options: ..." lists.
  std::string names() const;
  // [{name, type, default, doc, required}], for Lua and the docs.
  json describe() const;
};

// Whether `v` is a value of type `t` (null is every type's "not given").
bool fits(OptionType t, const json& v);

}  // namespace drun

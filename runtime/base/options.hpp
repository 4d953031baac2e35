// Options: the keyword arguments of a layer, optimizer, data set or strategy as
// they arrive from Lua (a JSON object), read with defaults and checked so that
// a misspelt or unknown key is an error naming the key and the valid ones.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/schema.hpp"

namespace drun {

// A user mistake (bad option, bad shape, bad file). The Lua edge reports it
// without a C++ stack; anything else is a bug.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Options {
 public:
  // `owner` names the thing being configured in messages, e.g. "Conv2D 'conv2d'".
  Options(json values, std::string owner);
  // Checked against `schema` at once: an unknown key or a value of the wrong
  // type is a UsageError, and get(key) falls back on the schema's default.
  // The schema must outlive the Options.
  Options(json values, std::string owner, const Schema& schema);

  bool has(const std::string& key) const;
  template <class T>
  T get(const std::string& key, const T& fallback);
  // The value, else the schema's default (a key the schema lacks is a bug).
  template <class T>
  T get(const std::string& key);
  template <class T>
  T require(const std::string& key);
  template <class T>
  std::optional<T> maybe(const std::string& key);
  const json& raw(const std::string& key);
  // raw(key), or the schema's default where the key was not given.
  const json& value(const std::string& key);
  // Throws UsageError when a key was given that nobody asked for.
  void finish() const;
  const std::string& owner() const { return owner_; }

 private:
  template <class T>
  T convert(const std::string& key, const json& v) const;
  const json& fallback(const std::string& key) const;
  json values_;
  std::string owner_;
  const Schema* schema_ = nullptr;
  std::set<std::string> known_;
};

template <class T>
T Options::convert(const std::string& key, const json& v) const {
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw UsageError(owner_ + ": option '" + key + "' has the wrong type (" + v.dump() + ")");
  }
}

template <class T>
T Options::get(const std::string& key, const T& fallback) {
  known_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end() || it->is_null()) return fallback;
  return convert<T>(key, *it);
}

template <class T>
T Options::get(const std::string& key) {
  known_.insert(key);
  auto it = values_.find(key);
  if (it != values_.end() && !it->is_null()) return convert<T>(key, *it);
  const json& d = fallback(key);
  if (d.is_null()) throw UsageError(owner_ + ": option '" + key + "' is required");
  return convert<T>(key, d);
}

template <class T>
T Options::require(const std::string& key) {
  known_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end() || it->is_null())
    throw UsageError(owner_ + ": option '" + key + "' is required");
  return convert<T>(key, *it);
}

template <class T>
std::optional<T> Options::maybe(const std::string& key) {
  known_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end() || it->is_null()) return std::nullopt;
  return convert<T>(key, *it);
}

}  // namespace drun

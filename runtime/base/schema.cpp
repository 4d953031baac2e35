#include "base/schema.hpp"

#include <algorithm>
#include <cmath>

namespace drun {

const char* option_type_name(OptionType t) {
  switch (t) {
    case OptionType::integer:
      return "integer";
    case OptionType::number:
      return "number";
    case OptionType::boolean:
      return "boolean";
    case OptionType::string:
      return "string";
    case OptionType::pair:
      return "integer or pair";
    case OptionType::single:
      return "integer or list of one";
    case OptionType::list:
      return "list";
    case OptionType::table:
      return "table";
    case OptionType::any:
      return "any";
  }
  return "any";
}

Schema::Schema(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) options.push_back(e.spec);
}

Schema Schema::with(const Schema& more) const {
  Schema s = *this;
  for (const OptionSpec& o : more.options)
    if (!s.find(o.name)) s.options.push_back(o);
  return s;
}

const OptionSpec* Schema::find(const std::string& name) const {
  for (const OptionSpec& o : options)
    if (o.name == name) return &o;
  return nullptr;
}

std::string Schema::names() const {
  std::vector<std::string> v;
  for (const OptionSpec& o : options) v.push_back(o.name);
  std::sort(v.begin(), v.end());
  std::string out;
  for (const auto& n : v) out += (out.empty() ? "" : ", ") + n;
  return out;
}

json Schema::describe() const {
  json out = json::array();
  for (const OptionSpec& o : options)
    out.push_back({{"name", o.name},
                   {"type", option_type_name(o.type)},
                   {"default", o.fallback},
                   {"doc", o.doc},
                   {"required", o.required}});
  return out;
}

namespace {
bool whole(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}
}  // namespace

bool fits(OptionType t, const json& v) {
  if (v.is_null()) return true;
  switch (t) {
    case OptionType::integer:
      return whole(v);
    case OptionType::number:
      return v.is_number();
    case OptionType::boolean:
      return v.is_boolean();
    case OptionType::string:
      return v.is_string();
    case OptionType::pair:
      return whole(v) || (v.is_array() && v.size() == 2 && whole(v[0]) && whole(v[1]));
    case OptionType::single:
      return whole(v) || (v.is_array() && v.size() == 1 && whole(v[0]));
    case OptionType::list:
      return v.is_array();
    case OptionType::table:
      return v.is_object() || v.is_array();
    case OptionType::any:
      return true;
  }
  return true;
}

}  // namespace drun

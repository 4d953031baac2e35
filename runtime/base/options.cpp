#include "base/options.hpp"

#include "base/did_you_mean.hpp"

namespace drun {

Options::Options(json values, std::string owner)
    : values_(values.is_null() ? json::object() : std::move(values)), owner_(std::move(owner)) {
  if (!values_.is_object()) throw UsageError(owner_ + ": options must be a table of key = value");
}

Options::Options(json values, std::string owner, const Schema& schema)
    : Options(std::move(values), std::move(owner)) {
  schema_ = &schema;
  for (auto it = values_.begin(); it != values_.end(); ++it) {
    const OptionSpec* spec = schema.find(it.key());
    if (!spec) {
      std::vector<std::string> names;
      for (const OptionSpec& o : schema.options) names.push_back(o.name);
      throw UsageError(owner_ + ": unknown option '" + it.key() + "'" +
                       did_you_mean(it.key(), names) + "; valid options: " + schema.names());
    }
    if (!fits(spec->type, it.value()))
      throw UsageError(owner_ + ": option '" + it.key() + "' has the wrong type (" +
                       it.value().dump() + "; expected " + option_type_name(spec->type) + ")");
  }
  for (const OptionSpec& o : schema.options) {
    known_.insert(o.name);
    if (o.required && !has(o.name))
      throw UsageError(owner_ + ": option '" + o.name + "' is required");
  }
}

const json& Options::fallback(const std::string& key) const {
  const OptionSpec* spec = schema_ ? schema_->find(key) : nullptr;
  if (!spec) throw std::logic_error(owner_ + ": option '" + key + "' has no default in a schema");
  return spec->fallback;
}

bool Options::has(const std::string& key) const {
  auto it = values_.find(key);
  return it != values_.end() && !it->is_null();
}

const json& Options::raw(const std::string& key) {
  known_.insert(key);
  static const json null_value;
  auto it = values_.find(key);
  return it == values_.end() ? null_value : *it;
}

const json& Options::value(const std::string& key) {
  const json& v = raw(key);
  if (!v.is_null() || !schema_) return v;
  return fallback(key);
}

void Options::finish() const {
  for (auto it = values_.begin(); it != values_.end(); ++it) {
    if (known_.count(it.key())) continue;
    std::string valid;
    for (const auto& k : known_) valid += (valid.empty() ? "" : ", ") + k;
    throw UsageError(
        owner_ + ": unknown option '" + it.key() + "'" +
        did_you_mean(it.key(), std::vector<std::string>(known_.begin(), known_.end())) +
        "; valid options: " + valid);
  }
}

}  // namespace drun

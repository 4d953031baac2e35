#include "base/options.hpp"

namespace drun {

Options::Options(json values, std::string owner)
    : values_(values.is_null() ? json::object() : std::move(values)), owner_(std::move(owner)) {
  if (!values_.is_object()) throw UsageError(owner_ + ": options must be a table of key = value");
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

void Options::finish() const {
  for (auto it = values_.begin(); it != values_.end(); ++it) {
    if (known_.count(it.key())) continue;
    std::string valid;
    for (const auto& k : known_) valid += (valid.empty() ? "" : ", ") + k;
    throw UsageError(owner_ + ": unknown option '" + it.key() + "'; valid options: " + valid);
  }
}

}  // namespace drun

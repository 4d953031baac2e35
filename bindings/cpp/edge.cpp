#include "edge.hpp"

#include <type_traits>

namespace drun::api {

json to_json(const Config& config, const std::string& what) {
  json j = json::object();
  for (const auto& [key, value] : config) {
    if (j.contains(key)) throw Error(what + ": option '" + key + "' given twice");
    std::visit([&, k = key](const auto& v) { j[k] = v; }, value.get());
  }
  return j;
}

json described(const std::string& class_name, const Config& config, const std::string& what) {
  return {{"class_name", class_name}, {"config", to_json(config, what + " " + class_name)}};
}

}  // namespace drun::api

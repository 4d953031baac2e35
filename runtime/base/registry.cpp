#include "base/registry.hpp"

#include <algorithm>

namespace drun {

bool Described::answers_to(const std::string& n) const {
  return std::find(names.begin(), names.end(), n) != names.end();
}

json Described::describe() const {
  return {
      {"names", names}, {"doc", doc}, {"options", schema.describe()}, {"positional", positional}};
}

}  // namespace drun

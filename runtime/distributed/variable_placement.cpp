#include "distributed/variable_placement.hpp"

#include <algorithm>

#include "base/options.hpp"

namespace drun::distributed {

std::vector<int> place_variables(const std::vector<int64_t>& bytes, int servers,
                                 const std::string& policy) {
  if (servers < 1)
    throw UsageError("variable placement needs at least one parameter server, got " +
                     std::to_string(servers));
  std::vector<int> server_of(bytes.size());
  if (policy == "round_robin") {
    for (size_t i = 0; i < bytes.size(); ++i) server_of[i] = static_cast<int>(i % servers);
  } else if (policy == "greedy") {
    std::vector<int64_t> load(static_cast<size_t>(servers), 0);
    for (size_t i = 0; i < bytes.size(); ++i) {
      const auto least = std::min_element(load.begin(), load.end()) - load.begin();
      server_of[i] = static_cast<int>(least);
      load[static_cast<size_t>(least)] += bytes[i];
    }
  } else {
    throw UsageError("unknown variable placement '" + policy + "'; use 'greedy' or 'round_robin'");
  }
  return server_of;
}

std::vector<int64_t> server_loads(const std::vector<int64_t>& bytes,
                                  const std::vector<int>& server_of, int servers) {
  std::vector<int64_t> load(static_cast<size_t>(std::max(servers, 0)), 0);
  for (size_t i = 0; i < bytes.size(); ++i) load[static_cast<size_t>(server_of[i])] += bytes[i];
  return load;
}

}  // namespace drun::distributed

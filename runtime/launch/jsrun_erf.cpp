#include "launch/jsrun_erf.hpp"

#include <algorithm>
#include <map>

#include "base/options.hpp"

namespace drun::launch {

std::string jsrun_erf(const std::vector<RankInfo>& ranks, const ClusterSpec& cluster,
                      int hardware_threads_per_core) {
  if (hardware_threads_per_core < 1)
    throw UsageError("hardware threads per core: expected at least 1, got " +
                     std::to_string(hardware_threads_per_core));
  std::string out =
      "cpu_index_using: logical\n"
      "overlapping_rs: allow\n"
      "oversubscribe_cpu: allow\n"
      "launch_distribution: packed\n";
  std::map<int, int> next_cpu;  // by node: the first hardware thread not yet given
  for (const RankInfo& r : ranks) {
    const int cores = r.node >= 0 && r.node < static_cast<int>(cluster.nodes.size())
                          ? cluster.nodes[static_cast<size_t>(r.node)].cores
                          : 0;
    const int width = std::max(r.threads, 1) * hardware_threads_per_core;
    const int on_node = cores > 0 ? cores * hardware_threads_per_core : 0;
    int first = next_cpu[r.node];
    if (on_node > 0 && first + width > on_node) first = 0;  // wrap around: oversubscribed
    int last = first + width - 1;
    if (on_node > 0) last = std::min(last, on_node - 1);
    next_cpu[r.node] = last + 1;
    out += "rank: " + std::to_string(r.rank) + ": { hostname: " + r.host + "; cpu: {" +
           std::to_string(first) + "-" + std::to_string(last) + "}";
    if (r.gpu >= 0) out += " ; gpu: {" + std::to_string(r.gpu) + "}";
    out += " }\n";
  }
  return out;
}

}  // namespace drun::launch

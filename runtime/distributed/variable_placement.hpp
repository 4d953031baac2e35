// Which parameter server holds which variable: a pure function of the
// variables' sizes, so every worker and every server computes the same table.
//   greedy       TensorFlow's GreedyLoadBalancingStrategy with byte size as
//                the load: each variable, in order, goes to the server that
//                holds the fewest bytes so far (ties: the lower index). The
//                final imbalance is at most the largest variable.
//   round_robin  TensorFlow's default replica_device_setter: variable i goes to
//                server i mod servers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace drun::distributed {

// Server index per variable. Throws UsageError for servers < 1 or an unknown policy.
std::vector<int> place_variables(const std::vector<int64_t>& bytes, int servers,
                                 const std::string& policy);

// Bytes per server under a placement.
std::vector<int64_t> server_loads(const std::vector<int64_t>& bytes,
                                  const std::vector<int>& server_of, int servers);

}  // namespace drun::distributed

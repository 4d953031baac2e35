#include "distributed/ps_protocol.hpp"

#include <algorithm>

#include "base/options.hpp"
#include "distributed/variable_placement.hpp"

namespace drun::distributed::ps {

std::string shard_path(const std::string& model_dir, int64_t step, int index) {
  return model_dir + "/ckpt-" + std::to_string(step) + ".ps-" + std::to_string(index) + ".h5";
}

int Roles::server_index(int world_rank) const {
  const auto it = std::find(servers.begin(), servers.end(), world_rank);
  return it == servers.end() ? -1 : static_cast<int>(it - servers.begin());
}

Roles exchange_roles(Communicator& world, bool is_server) {
  const auto flags = world.allgather(is_server ? 1 : 0);
  Roles r;
  for (int i = 0; i < static_cast<int>(flags.size()); ++i)
    (flags[static_cast<size_t>(i)] ? r.servers : r.workers).push_back(i);
  if (r.workers.empty()) throw UsageError("the job has parameter servers but no worker");
  return r;
}

Layout::Layout(std::span<Param* const> params, int servers, const std::string& policy) {
  std::vector<int64_t> bytes;
  std::vector<size_t> index;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i]->trainable) continue;
    bytes.push_back(params[i]->value.numel() * 4);
    index.push_back(i);
  }
  const auto server_of = place_variables(bytes, servers, policy);
  server_floats.assign(static_cast<size_t>(servers), 0);
  for (size_t k = 0; k < index.size(); ++k) {
    const int s = server_of[k];
    const int64_t n = params[index[k]]->value.numel();
    slots.push_back({index[k], s, server_floats[static_cast<size_t>(s)], n});
    server_floats[static_cast<size_t>(s)] += n;
  }
}

}  // namespace drun::distributed::ps

// drun --min-workers: a job that lost a node goes on on the nodes left. The
// launcher drops the lost node from the cluster and places the ranks again;
// the ranks of the rerun learn what happened from DRUN_RESIZED, which the
// chief records in summary.json ("resizes").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "launch/cluster.hpp"

namespace drun::launch {

struct Resize {
  std::string lost_node;
  int64_t step = 0;  // the newest checkpoint's, which the rerun resumes from
  int workers_before = 0, workers_after = 0;
};

// The cluster without the node named `host` (the same cluster when no node
// has that name).
ClusterSpec without_host(const ClusterSpec& cluster, const std::string& host);

// DRUN_RESIZED's text, oldest first: "nodeb:120:4:2,nodec:300:2:1".
std::string resizes_text(const std::vector<Resize>& resizes);
// And back; "" gives none. Throws UsageError naming the variable when malformed.
std::vector<Resize> parse_resizes(const std::string& text);
// summary.json's "resizes": [{"lost_node", "step", "workers_before", "workers_after"}, ...].
json resizes_json(const std::vector<Resize>& resizes);

}  // namespace drun::launch

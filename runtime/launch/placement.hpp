// Placement: which rank runs where and as what. A pure function from a cluster
// description to a role table, kept apart from the code that starts processes
// so that --dry-run and the unit tests see exactly what a real job would do.
//
// The rule: on every node the parameter servers first (when there are any),
// then the workers: as many as -np spreads there, else workers_per_node, else
// the ranks the user asked the scheduler for on that node less its servers,
// else one per GPU, else one. Ranks are numbered node by node in that order.
// Worker 0 is the chief.
//
// Task indices follow TensorFlow, where the chief is a job of its own: the
// chief is ("chief", 0) and the other workers are ("worker", 0..W-2) in rank
// order; parameter servers are ("ps", 0..P-1) in rank order.
#pragma once
#include <string>
#include <vector>

#include "base/options.hpp"
#include "launch/cluster.hpp"

namespace drun::launch {

struct PlacementOptions {
  int ps_per_node = -1;       // -1: one per node when needs_ps, else 0
  int total_ps = -1;          // --ps: servers in all, spread over the nodes like -np
  bool needs_ps = false;      // the experiment's strategy uses parameter servers
  int workers_per_node = -1;  // -1: the node's GPUs when > 0, else 1
  int total_workers = -1;     // -np: workers in all; on several nodes spread evenly,
                              // the first nodes taking the remainder
  int threads_per_rank = 0;   // 0: cores_per_rank(node cores, ranks on the node)
};

// The threads of a rank that was given none: its node's cores shared by the
// ranks there, at least one. The one rule for dividing a node's cores, which
// the placement and a rank started without one (train/job) both follow.
int cores_per_rank(int cores, int ranks_on_node);

struct RankInfo {
  int rank = 0;
  std::string host;
  int node = 0;        // index into ClusterSpec::nodes
  std::string role;    // "chief", "worker" or "ps"
  int task_index = 0;  // index within its role's list in TF_CONFIG
  int gpu = -1;        // device index on its node; -1: none (CPU or ps)
  int threads = 1;     // compute threads this rank may use
};

// Throws drun::UsageError for an empty cluster, negative counts, both
// total_workers and workers_per_node (or total_ps and ps_per_node) given, or
// a placement without workers.
// A worker on a GPU node gets GPU (local worker index mod GPUs), so more
// workers than GPUs share them round-robin.
std::vector<RankInfo> place(const ClusterSpec& cluster, const PlacementOptions& opt);

// One warning line for each node where `ranks` put more ranks than the
// slots the scheduler or hostfile granted it (a node of unknown slots has
// none): Open MPI refuses or oversubscribes such a job, so the user hears it
// before it starts. This machine alone ("local") has its cores for slots,
// which -np may exceed on purpose: no warning there.
std::vector<std::string> oversubscribed(const ClusterSpec& cluster,
                                        const std::vector<RankInfo>& ranks);

// TensorFlow's TF_CONFIG for one rank:
//   {"cluster": {"chief": ["host:port"], "worker": [...], "ps": [...]},
//    "task": {"type": "worker", "index": 0}}
// Lists are in task-index order; empty lists are left out. Ports are
// 2222 + the rank's index among the ranks on its host (2222 is TensorFlow's
// customary port), so addresses are unique however many ranks share a host.
json tf_config(const std::vector<RankInfo>& ranks, int rank);

// A fixed-width table for --dry-run: rank, host, role, task, GPU ("-" when
// none) and threads, one line per rank after a header line.
std::string placement_table(const std::vector<RankInfo>& ranks);

// The role table as JSON and back: the launcher hands it to every rank
// (environment variable DRUN_PLACEMENT), so all ranks see the same one.
json placement_json(const std::vector<RankInfo>& ranks);
// The parameter servers among ranks (the others are workers).
int servers_in(const std::vector<RankInfo>& ranks);
// Checks what tf_config and the ranks rely on (rank i at index i, roles,
// task indices in range and unique); UsageError naming what is wrong.
std::vector<RankInfo> placement_from_json(const json& table);
// The same from the variable's text.
std::vector<RankInfo> placement_from_text(const std::string& text);

}  // namespace drun::launch

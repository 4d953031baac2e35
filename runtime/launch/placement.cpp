#include "launch/placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace drun::launch {
namespace {

void check(const PlacementOptions& opt) {
  auto at_least = [](int v, int min, const char* what) {
    if (v < min) throw UsageError(fmt::format("placement: {} is {}, must be >= {}", what, v, min));
  };
  at_least(opt.ps_per_node, -1, "ps_per_node");
  at_least(opt.workers_per_node, -1, "workers_per_node");
  at_least(opt.total_workers, -1, "total_workers");
  at_least(opt.total_ps, -1, "total_ps");
  at_least(opt.threads_per_rank, 0, "threads_per_rank");
  if (opt.total_workers >= 0 && opt.workers_per_node >= 0)
    throw UsageError(
        "placement: give the number of workers in all (-np) or per node "
        "(--workers-per-node), not both");
  if (opt.total_ps >= 0 && opt.ps_per_node >= 0)
    throw UsageError(
        "placement: give the number of parameter servers in all (--ps) or per node "
        "(--ps-per-node), not both");
}

// More ranks than any job runs (Aurora's 63,744 GPUs are 127,488 tiles):
// placing them and building TF_CONFIG is O(ranks), 1.8 s and 0.7 GB for this
// many with 250-character host names under AddressSanitizer (fuzz_cluster).
constexpr int64_t kMaxRanks = 1 << 17;

// `total` spread over n nodes, the first ones taking the remainder: node i's share.
int share(int total, int i, int n) {
  return total / n + (i < total % n ? 1 : 0);
}

// Servers on node i of n.
int servers_on(int i, int n, const PlacementOptions& opt) {
  if (opt.total_ps >= 0) return share(opt.total_ps, i, n);
  if (opt.ps_per_node >= 0) return opt.ps_per_node;
  return opt.needs_ps ? 1 : 0;
}

// Workers on node i of n, which runs `ps` servers.
int workers_on(const Node& node, int i, int n, int ps, const PlacementOptions& opt) {
  if (opt.total_workers >= 0) return share(opt.total_workers, i, n);
  if (opt.workers_per_node >= 0) return opt.workers_per_node;
  // The scheduler's tasks are ranks: the servers run in some of them.
  if (node.tasks > 0) return std::max(0, node.tasks - ps);
  return node.gpus > 0 ? node.gpus : 1;
}

}  // namespace

int cores_per_rank(int cores, int ranks_on_node) {
  return std::max(1, cores / std::max(1, ranks_on_node));
}

std::vector<RankInfo> place(const ClusterSpec& cluster, const PlacementOptions& opt) {
  check(opt);
  const int n = static_cast<int>(cluster.nodes.size());
  if (n == 0) throw UsageError("placement: the cluster has no nodes");

  // Counted before any is built: a node list of 200,000 hosts with 65,536
  // tasks each would ask for 13 billion ranks.
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const int ps = servers_on(i, n, opt);
    total += ps + workers_on(cluster.nodes[i], i, n, ps, opt);
  }
  if (total > kMaxRanks)
    throw UsageError(fmt::format(
        "placement: {} ranks on {} nodes is more than drun places (at most {}; check -np, "
        "--workers-per-node and the tasks, slots or GPUs the scheduler lists)",
        total, n, kMaxRanks));

  std::vector<RankInfo> ranks;
  ranks.reserve(static_cast<size_t>(total));
  int next_worker = 0, next_ps = 0;
  for (int i = 0; i < n; ++i) {
    const Node& node = cluster.nodes[i];
    const int ps = servers_on(i, n, opt);
    const int workers = workers_on(node, i, n, ps, opt);
    const int local = ps + workers;
    const int threads =
        opt.threads_per_rank > 0 ? opt.threads_per_rank : cores_per_rank(node.cores, local);
    for (int j = 0; j < local; ++j) {
      RankInfo r;
      r.rank = static_cast<int>(ranks.size());
      r.host = node.host;
      r.node = i;
      r.threads = threads;
      if (j < ps) {
        r.role = "ps";
        r.task_index = next_ps++;
      } else {
        const int w = next_worker++;
        // TensorFlow lists the chief apart, so the other workers count from 0.
        r.role = w == 0 ? "chief" : "worker";
        r.task_index = w == 0 ? 0 : w - 1;
        if (node.gpus > 0) r.gpu = (j - ps) % node.gpus;
      }
      ranks.push_back(std::move(r));
    }
  }
  if (next_worker == 0)
    throw UsageError(
        "placement: no workers would run (check -np, --workers-per-node and the tasks asked "
        "of the scheduler, which the parameter servers share)");
  return ranks;
}

std::vector<std::string> oversubscribed(const ClusterSpec& cluster,
                                        const std::vector<RankInfo>& ranks) {
  std::vector<int> on_node(cluster.nodes.size(), 0);
  for (const RankInfo& r : ranks)
    if (r.node >= 0 && r.node < static_cast<int>(on_node.size())) ++on_node[r.node];
  std::vector<std::string> lines;
  if (cluster.source == "local") return lines;  // this machine's "slots" are its cores
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const Node& n = cluster.nodes[i];
    if (n.slots > 0 && on_node[i] > n.slots)
      lines.push_back("placement puts " + std::to_string(on_node[i]) + " ranks on " + n.host +
                      ", which has " + std::to_string(n.slots) + " slot" +
                      (n.slots == 1 ? "" : "s") + " (give fewer -np or --ps, or more slots)");
  }
  return lines;
}

json tf_config(const std::vector<RankInfo>& ranks, int rank) {
  if (rank < 0 || rank >= static_cast<int>(ranks.size()))
    throw std::out_of_range(fmt::format("tf_config: rank {} of {}", rank, ranks.size()));
  // Each role's addresses in task-index order; the port counts ranks per host.
  // Built in place, each address once: TF_CONFIG of 262,144 ranks with long
  // host names took seconds when every address was copied twice.
  const std::array<const char*, 3> roles = {"chief", "worker", "ps"};
  std::array<json, 3> lists;
  for (json& list : lists) list = json::array();
  std::unordered_map<std::string_view, int> on_host;  // a cluster may have 200,000 hosts
  on_host.reserve(ranks.size());
  for (const RankInfo& r : ranks) {
    const size_t role = std::find(roles.begin(), roles.end(), r.role) - roles.begin();
    if (role == roles.size()) throw std::invalid_argument("tf_config: role '" + r.role + "'");
    auto& list = lists[role].get_ref<json::array_t&>();
    if (list.size() <= static_cast<size_t>(r.task_index)) list.resize(r.task_index + 1);
    list[r.task_index] = fmt::format("{}:{}", r.host, 2222 + on_host[r.host]++);
  }
  json cluster = json::object();
  for (size_t i = 0; i < roles.size(); ++i)
    if (!lists[i].empty()) cluster[roles[i]] = std::move(lists[i]);
  const RankInfo& me = ranks[rank];
  return {{"cluster", cluster}, {"task", {{"type", me.role}, {"index", me.task_index}}}};
}

int servers_in(const std::vector<RankInfo>& ranks) {
  int n = 0;
  for (const RankInfo& r : ranks) n += r.role == "ps";
  return n;
}

json placement_json(const std::vector<RankInfo>& ranks) {
  json out = json::array();
  for (const RankInfo& r : ranks)
    out.push_back({{"rank", r.rank},
                   {"host", r.host},
                   {"node", r.node},
                   {"role", r.role},
                   {"task_index", r.task_index},
                   {"gpu", r.gpu},
                   {"threads", r.threads}});
  return out;
}

std::vector<RankInfo> placement_from_json(const json& table) {
  const auto bad = [](const std::string& what) {
    return UsageError("DRUN_PLACEMENT is not a placement table: " + what);
  };
  if (!table.is_array() || table.empty()) throw bad("not a non-empty list of ranks");
  // json's get<int> casts whatever number it holds: 1e300 (UndefinedBehavior-
  // Sanitizer, tools/fuzz/fuzz_placement) or 2^40 would become any int.
  const auto whole = [&](const json& e, const char* key) {
    const json& v = e.at(key);
    constexpr int64_t lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
    const bool fits = v.is_number_unsigned()  ? v.get<uint64_t>() <= uint64_t{hi}
                      : v.is_number_integer() ? v.get<int64_t>() >= lo && v.get<int64_t>() <= hi
                                              : false;
    if (!fits)
      throw bad(std::string(key) + " is " + v.dump() + ", not a whole number in int range");
    return v.get<int>();
  };
  std::vector<RankInfo> out;
  try {
    for (const auto& e : table)
      out.push_back({whole(e, "rank"), e.at("host").get<std::string>(), whole(e, "node"),
                     e.at("role").get<std::string>(), whole(e, "task_index"), whole(e, "gpu"),
                     whole(e, "threads")});
  } catch (const json::exception& e) {
    throw bad(e.what());
  }
  // What tf_config and the ranks index by must be in range: a table is
  // written by the launcher, but the environment can be anything.
  const int n = static_cast<int>(out.size());
  std::set<std::pair<std::string, int>> tasks;
  for (int i = 0; i < n; ++i) {
    const RankInfo& r = out[static_cast<size_t>(i)];
    const std::string who = "rank " + std::to_string(i);
    if (r.rank != i) throw bad(who + " says it is rank " + std::to_string(r.rank));
    if (r.role != "chief" && r.role != "worker" && r.role != "ps")
      throw bad(who + " has role '" + r.role + "' (chief, worker or ps)");
    if (r.task_index < 0 || r.task_index >= n || !tasks.insert({r.role, r.task_index}).second)
      throw bad(who + " has task_index " + std::to_string(r.task_index) +
                ", out of range or taken");
    if (r.node < 0 || r.gpu < -1 || r.threads < 1)
      throw bad(who + " has a negative node, a gpu below -1 or threads below 1");
  }
  return out;
}

std::vector<RankInfo> placement_from_text(const std::string& text) {
  const json table = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (table.is_discarded()) throw UsageError("DRUN_PLACEMENT is not JSON: '" + text + "'");
  return placement_from_json(table);
}

std::string placement_table(const std::vector<RankInfo>& ranks) {
  size_t host_width = 4;
  for (const RankInfo& r : ranks) host_width = std::max(host_width, r.host.size());
  std::string out = fmt::format("{:>4}  {:<{}}  {:<6}  {:>4}  {:>3}  {:>7}\n", "rank", "host",
                                host_width, "role", "task", "gpu", "threads");
  for (const RankInfo& r : ranks)
    out += fmt::format("{:>4}  {:<{}}  {:<6}  {:>4}  {:>3}  {:>7}\n", r.rank, r.host, host_width,
                       r.role, r.task_index, r.gpu < 0 ? "-" : std::to_string(r.gpu), r.threads);
  return out;
}

}  // namespace drun::launch

// Placement: parameter servers first on every node, one worker per GPU,
// worker 0 the chief; TF_CONFIG and the --dry-run table that follow from it.
#include "launch/placement.hpp"

#include <gtest/gtest.h>

#include "usage_error.hpp"

namespace drun::launch {
namespace {

using drun::testing::expect_usage_error;
using Strings = std::vector<std::string>;

ClusterSpec nodes(int n, int gpus, int cores) {
  ClusterSpec c{"hostfile", {}};
  for (int i = 0; i < n; ++i)
    c.nodes.push_back(Node{std::string("n") + std::to_string(i), gpus, cores, cores});
  return c;
}

Strings roles(const std::vector<RankInfo>& ranks) {
  Strings r;
  for (const RankInfo& x : ranks) r.push_back(x.role);
  return r;
}

std::vector<int> column(const std::vector<RankInfo>& ranks, int RankInfo::*field) {
  std::vector<int> v;
  for (const RankInfo& x : ranks) v.push_back(x.*field);
  return v;
}

TEST(Placement, TwoNodesFourGpusWithParameterServers) {
  PlacementOptions o;
  o.needs_ps = true;
  auto ranks = place(nodes(2, 4, 20), o);
  ASSERT_EQ(ranks.size(), 10u);
  EXPECT_EQ(roles(ranks), (Strings{"ps", "chief", "worker", "worker", "worker", "ps", "worker",
                                   "worker", "worker", "worker"}));
  EXPECT_EQ(column(ranks, &RankInfo::rank), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(column(ranks, &RankInfo::node), (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(column(ranks, &RankInfo::gpu), (std::vector<int>{-1, 0, 1, 2, 3, -1, 0, 1, 2, 3}));
  EXPECT_EQ(column(ranks, &RankInfo::task_index), (std::vector<int>{0, 0, 0, 1, 2, 1, 3, 4, 5, 6}));
  EXPECT_EQ(column(ranks, &RankInfo::threads), std::vector<int>(10, 4));  // 20 cores / 5 ranks
  EXPECT_EQ(ranks[1].host, "n0");  // the chief is rank 1, on node 0
  EXPECT_EQ(ranks[9].host, "n1");

  json tf = tf_config(ranks, 0);
  EXPECT_EQ(tf["cluster"]["chief"], json({"n0:2223"}));
  EXPECT_EQ(tf["cluster"]["worker"],
            json({"n0:2224", "n0:2225", "n0:2226", "n1:2223", "n1:2224", "n1:2225", "n1:2226"}));
  EXPECT_EQ(tf["cluster"]["ps"], json({"n0:2222", "n1:2222"}));
  EXPECT_EQ(tf["task"], json({{"type", "ps"}, {"index", 0}}));
  EXPECT_EQ(tf_config(ranks, 1)["task"], json({{"type", "chief"}, {"index", 0}}));
  EXPECT_EQ(tf_config(ranks, 6)["task"], json({{"type", "worker"}, {"index", 3}}));
  EXPECT_EQ(tf_config(ranks, 5)["task"], json({{"type", "ps"}, {"index", 1}}));
}

TEST(Placement, AllReduceHasOnlyWorkers) {
  auto ranks = place(nodes(2, 2, 8), {});
  EXPECT_EQ(roles(ranks), (Strings{"chief", "worker", "worker", "worker"}));
  EXPECT_EQ(column(ranks, &RankInfo::gpu), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(column(ranks, &RankInfo::threads), std::vector<int>(4, 4));
  json tf = tf_config(ranks, 2);
  EXPECT_FALSE(tf["cluster"].contains("ps"));
  EXPECT_EQ(tf["cluster"]["chief"], json({"n0:2222"}));
  EXPECT_EQ(tf["cluster"]["worker"], json({"n0:2223", "n1:2222", "n1:2223"}));
  EXPECT_EQ(tf["task"], json({{"type", "worker"}, {"index", 1}}));
}

TEST(Placement, CpuNodesGetOneWorkerOrWorkersPerNode) {
  auto ranks = place(nodes(2, 0, 4), {});
  EXPECT_EQ(roles(ranks), (Strings{"chief", "worker"}));
  EXPECT_EQ(column(ranks, &RankInfo::gpu), (std::vector<int>{-1, -1}));
  EXPECT_EQ(column(ranks, &RankInfo::threads), (std::vector<int>{4, 4}));
  PlacementOptions o;
  o.workers_per_node = 2;
  o.ps_per_node = 1;  // explicit ps count without the strategy asking
  ranks = place(nodes(2, 0, 4), o);
  EXPECT_EQ(roles(ranks), (Strings{"ps", "chief", "worker", "ps", "worker", "worker"}));
  EXPECT_EQ(column(ranks, &RankInfo::threads), std::vector<int>(6, 1));  // max(1, 4 / 3)
}

TEST(Placement, NpOnOneMachineWithTwoCores) {
  PlacementOptions o;
  o.total_workers = 4;
  auto ranks = place(ClusterSpec{"local", {Node{"box", 0, 2, 2}}}, o);
  EXPECT_EQ(roles(ranks), (Strings{"chief", "worker", "worker", "worker"}));
  EXPECT_EQ(column(ranks, &RankInfo::task_index), (std::vector<int>{0, 0, 1, 2}));
  EXPECT_EQ(column(ranks, &RankInfo::threads), std::vector<int>(4, 1));  // max(1, 2 / 4)
  o.total_workers = 1;
  EXPECT_EQ(place(ClusterSpec{"local", {Node{"box", 0, 2, 2}}}, o)[0].threads, 2);
}

TEST(Placement, TotalWorkersSpreadOverNodes) {
  PlacementOptions o;
  o.total_workers = 4;
  auto ranks = place(nodes(3, 0, 2), o);
  EXPECT_EQ(column(ranks, &RankInfo::node), (std::vector<int>{0, 0, 1, 2}));
}

TEST(Placement, ThreadsPerRankOverride) {
  PlacementOptions o;
  o.needs_ps = true;
  o.threads_per_rank = 3;
  auto ranks = place(nodes(2, 4, 20), o);
  EXPECT_EQ(column(ranks, &RankInfo::threads), std::vector<int>(10, 3));
}

TEST(Placement, MoreWorkersThanGpusShareThemRoundRobin) {
  PlacementOptions o;
  o.workers_per_node = 3;
  EXPECT_EQ(column(place(nodes(1, 2, 6), o), &RankInfo::gpu), (std::vector<int>{0, 1, 0}));
}

TEST(Placement, SchedulerTasksAreRanksServersIncluded) {
  ClusterSpec c = nodes(2, 0, 2);
  c.nodes[0].tasks = 2;  // sbatch -N 2 -n 3
  c.nodes[1].tasks = 1;
  EXPECT_EQ(roles(place(c, {})), (Strings{"chief", "worker", "worker"}));
  PlacementOptions o;
  o.total_ps = 1;  // drun --ps 1: one server in all, on the first node
  auto ranks = place(c, o);
  EXPECT_EQ(roles(ranks), (Strings{"ps", "chief", "worker"}));
  EXPECT_EQ(column(ranks, &RankInfo::node), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(column(ranks, &RankInfo::threads), (std::vector<int>{1, 1, 2}));
  // -np and --workers-per-node still win over the scheduler's tasks.
  o = {};
  o.total_workers = 4;
  EXPECT_EQ(place(c, o).size(), 4u);
  o = {};
  o.workers_per_node = 1;
  EXPECT_EQ(place(c, o).size(), 2u);
  // Scheduler tasks win over GPUs: --ntasks-per-node=2 on 4-GPU nodes.
  c = nodes(1, 4, 8);
  c.nodes[0].tasks = 2;
  EXPECT_EQ(column(place(c, {}), &RankInfo::gpu), (std::vector<int>{0, 1}));
}

TEST(Placement, TotalPsSpreadsLikeNp) {
  PlacementOptions o;
  o.total_ps = 3;
  auto ranks = place(nodes(2, 0, 4), o);
  EXPECT_EQ(roles(ranks), (Strings{"ps", "ps", "chief", "ps", "worker"}));
}

TEST(Placement, Errors) {
  expect_usage_error([] { place(ClusterSpec{"local", {}}, {}); }, {"no nodes"});
  PlacementOptions o;
  o.total_workers = 0;
  expect_usage_error([&] { place(nodes(1, 0, 2), o); }, {"no workers"});
  o.total_workers = 2;
  o.workers_per_node = 1;
  expect_usage_error([&] { place(nodes(1, 0, 2), o); }, {"not both"});
  o = {};
  o.ps_per_node = -2;
  expect_usage_error([&] { place(nodes(1, 0, 2), o); }, {"ps_per_node", "-2"});
  o = {};
  o.ps_per_node = 1;
  o.total_ps = 1;
  expect_usage_error([&] { place(nodes(1, 0, 2), o); }, {"--ps", "--ps-per-node", "not both"});
  ClusterSpec c = nodes(1, 0, 2);
  c.nodes[0].tasks = 1;  // sbatch -n 1 for a strategy with a server
  o = {};
  o.needs_ps = true;
  expect_usage_error([&] { place(c, o); }, {"no workers", "tasks asked of the scheduler"});
  EXPECT_THROW(tf_config(place(nodes(1, 0, 2), {}), 1), std::out_of_range);
}

// Ranks are counted before any is built: 200,000 nodes with 65,536 tasks
// each would be 13 billion (fuzz_cluster).
TEST(Placement, MoreRanksThanAnyJobAreRefused) {
  ClusterSpec c = nodes(200000, 0, 2);
  for (Node& n : c.nodes) n.tasks = 65536;
  expect_usage_error([&] { place(c, {}); },
                     {"13107200000 ranks on 200000 nodes", "at most 131072"});
  c.nodes.resize(2);
  c.nodes[1].tasks = 65536 - 1;  // 65,536 × 2 = 131,072, the most placed
  const auto ranks = place(c, {});
  ASSERT_EQ(ranks.size(), 131071u);
  const json config = tf_config(ranks, 131070);
  EXPECT_EQ(config["cluster"]["worker"].size(), 131070u);
  EXPECT_EQ(config["cluster"]["worker"].back(), "n1:" + std::to_string(2222 + 65534));
  EXPECT_EQ(config["task"]["index"], 131069);
}

// DRUN_PLACEMENT comes from the environment: a table that would index out
// of range (a negative or huge task_index wrote before tf_config's list) is
// refused by name (found by tools/fuzz/fuzz_placement).
TEST(Placement, TableFromTheEnvironmentIsChecked) {
  const auto ranks = place(nodes(2, 1, 2), {});
  EXPECT_EQ(placement_from_text(placement_json(ranks).dump()).size(), ranks.size());
  const auto with = [&](const std::string& key, const json& value) {
    json table = placement_json(ranks);
    table[1][key] = value;
    return table.dump();
  };
  expect_usage_error([] { placement_from_text("[{"); }, {"DRUN_PLACEMENT is not JSON"});
  expect_usage_error([] { placement_from_text("{}"); }, {"not a non-empty list"});
  expect_usage_error([&] { placement_from_text(with("task_index", -1)); },
                     {"rank 1", "task_index -1"});
  expect_usage_error([&] { placement_from_text(with("task_index", 1 << 30)); },
                     {"rank 1", "task_index"});
  expect_usage_error([&] { placement_from_text(with("role", "chief")); }, {"rank 1", "taken"});
  expect_usage_error([&] { placement_from_text(with("role", "boss")); }, {"rank 1", "'boss'"});
  expect_usage_error([&] { placement_from_text(with("rank", 5)); }, {"rank 1 says it is rank 5"});
  expect_usage_error([&] { placement_from_text(with("threads", 0)); }, {"rank 1", "threads"});
  expect_usage_error([&] { placement_from_text(with("host", 3)); }, {"DRUN_PLACEMENT"});
  // Numbers an int cannot hold (1e300 was a float-to-int cast: tools/fuzz/fuzz_placement).
  expect_usage_error([&] { placement_from_text(with("gpu", 1e300)); }, {"gpu is 1e+300"});
  expect_usage_error([&] { placement_from_text(with("threads", 2.5)); }, {"threads is 2.5"});
  expect_usage_error([&] { placement_from_text(with("node", int64_t{1} << 40)); },
                     {"node is 1099511627776"});
  expect_usage_error([&] { placement_from_text(with("rank", uint64_t{1} << 63)); }, {"rank is"});
}

// Recorded Slurm and LSF allocations as --dry-run plans them, end to end:
// environment → cluster → table.
TEST(DryRun, SlurmThreeNodesTwoGpusWithParameterServers) {
  Environment env({{"SLURM_JOB_NODELIST", "node[1-3]"},
                   {"SLURM_GPUS_ON_NODE", "2"},
                   {"SLURM_JOB_CPUS_PER_NODE", "8(x3)"},
                   {"SLURM_NTASKS", "9"}});
  PlacementOptions o;
  o.needs_ps = true;
  auto ranks = place(discover_cluster(env, {}), o);
  EXPECT_EQ(placement_table(ranks),
            "rank  host   role    task  gpu  threads\n"
            "   0  node1  ps         0    -        2\n"
            "   1  node1  chief      0    0        2\n"
            "   2  node1  worker     0    1        2\n"
            "   3  node2  ps         1    -        2\n"
            "   4  node2  worker     1    0        2\n"
            "   5  node2  worker     2    1        2\n"
            "   6  node3  ps         2    -        2\n"
            "   7  node3  worker     3    0        2\n"
            "   8  node3  worker     4    1        2\n");
  json tf = tf_config(ranks, 0);
  EXPECT_EQ(tf["cluster"]["ps"], json({"node1:2222", "node2:2222", "node3:2222"}));
  EXPECT_EQ(tf["cluster"]["worker"].size(), 5u);
}

TEST(DryRun, LsfSummitLikeAllReduce) {
  Environment env({{"LSB_JOBID", "42"},
                   {"LSB_HOSTS", "batch1 h1 h1 h1 h1 h2 h2 h2 h2"},
                   {"LSB_MCPU_HOSTS", "batch1 1 h1 4 h2 4"},
                   {"CUDA_VISIBLE_DEVICES", "0,1"}});
  auto ranks = place(discover_cluster(env, {}), {});
  EXPECT_EQ(placement_table(ranks),
            "rank  host  role    task  gpu  threads\n"
            "   0  h1    chief      0    0        2\n"
            "   1  h1    worker     0    1        2\n"
            "   2  h2    worker     1    0        2\n"
            "   3  h2    worker     2    1        2\n");
  // LSB_HOSTS alone gives the same nodes and slots.
  env = Environment(
      {{"LSB_HOSTS", "batch1 h1 h1 h1 h1 h2 h2 h2 h2"}, {"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(placement_table(place(discover_cluster(env, {}), {})), placement_table(ranks));
}

// The case: slots=2 on each of 2 nodes, -np 4 with parameter
// servers: 6 ranks on 4 slots, one warning a node.
TEST(Placement, WarnsOfMoreRanksThanSlots) {
  ClusterSpec c = nodes(2, 0, 2);
  PlacementOptions o;
  o.needs_ps = true;
  o.total_workers = 4;
  const Strings lines = oversubscribed(c, place(c, o));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("3 ranks on n0, which has 2 slots"), std::string::npos) << lines[0];
  o.needs_ps = false;
  EXPECT_TRUE(oversubscribed(c, place(c, o)).empty());
  c.nodes[0].slots = 0;  // unknown: nothing to compare with
  o.needs_ps = true;
  EXPECT_EQ(oversubscribed(c, place(c, o)).size(), 1u);
  c.source = "local";
  EXPECT_TRUE(oversubscribed(c, place(c, o)).empty());
}

}  // namespace
}  // namespace drun::launch

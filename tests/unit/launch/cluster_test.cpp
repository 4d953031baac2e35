// Cluster discovery: Slurm node lists, LSF, PBS, hostfiles and this machine,
// read from made-up environments, and errors that name what was wrong.
#include "launch/cluster.hpp"

#include <gtest/gtest.h>

#include "temp_file.hpp"
#include "usage_error.hpp"

namespace drun::launch {
namespace {

using drun::testing::expect_usage_error;
using drun::testing::TempFile;
using Hosts = std::vector<std::string>;

Hosts hosts_of(const ClusterSpec& c) {
  Hosts h;
  for (const Node& n : c.nodes) h.push_back(n.host);
  return h;
}

DiscoverOptions local_opts() {
  DiscoverOptions o;
  o.local_host = "box";
  o.local_cores = 2;
  return o;
}

// --- Slurm node lists ----------------------------------------------------------

TEST(SlurmNodelist, Expands) {
  EXPECT_EQ(expand_slurm_nodelist("node[1-3]"), (Hosts{"node1", "node2", "node3"}));
  EXPECT_EQ(expand_slurm_nodelist("node[10,20-23]"),
            (Hosts{"node10", "node20", "node21", "node22", "node23"}));
  EXPECT_EQ(expand_slurm_nodelist("a1,b[01-02]"), (Hosts{"a1", "b01", "b02"}));
  EXPECT_EQ(expand_slurm_nodelist("single"), (Hosts{"single"}));
}

TEST(SlurmNodelist, KeepsZeroPaddingOfTheLowerBound) {
  EXPECT_EQ(expand_slurm_nodelist("n[08-10]"), (Hosts{"n08", "n09", "n10"}));
  EXPECT_EQ(expand_slurm_nodelist("n[8-10]"), (Hosts{"n8", "n9", "n10"}));
  EXPECT_EQ(expand_slurm_nodelist("n[007]"), (Hosts{"n007"}));
}

TEST(SlurmNodelist, SeveralBracketsGiveEveryCombination) {
  EXPECT_EQ(expand_slurm_nodelist("r[1-2]-n[1-2].ib"),
            (Hosts{"r1-n1.ib", "r1-n2.ib", "r2-n1.ib", "r2-n2.ib"}));
}

TEST(SlurmNodelist, MalformedListsAreClearErrors) {
  auto bad = [](const std::string& list, const std::string& why) {
    SCOPED_TRACE(list);
    expect_usage_error([&] { expand_slurm_nodelist(list); }, {"Slurm node list", why});
  };
  bad("", "is empty");
  bad("node[1-3", "'[' without ']'");
  bad("node1-3]", "']' without '['");
  bad("node[1-[2]]", "nested");
  bad("node[3-1]", "runs backwards");
  bad("node[a-b]", "not a number");
  bad("node[1-]", "not a number");
  bad("node[]", "empty brackets");
  bad("a,,b", "empty entry");
  bad("a, b", "space");
  bad("[1-2]", "no host name");
  bad("n[1-999999999]", "too large");
  // Ranges each allowed, together past 100,000 hosts (fuzz_cluster).
  bad("a[1-99999],b[1-3]", "too many hosts");
  // Three brackets: 721,000 hosts, each bracket small (fuzz_cluster).
  bad("e[0-418]f[0-41]node[1-41]", "too many hosts");
  // Two brackets of 2,225 values each: 5 million names, refused before any
  // is built (it took 2 GiB first: fuzz_cluster).
  bad("nod[0-2223,5]gpu[1-2223,5]", "too many hosts");
  bad(std::string(300, 'n'), "longer than 255");
  bad("n[1-2]" + std::string(254, 'x'), "longer than 255");
}

// --- discovery -----------------------------------------------------------------

TEST(Discover, Slurm) {
  Environment env({{"SLURM_JOB_NODELIST", "node[1-3]"},
                   {"SLURM_GPUS_ON_NODE", "2"},
                   {"SLURM_JOB_CPUS_PER_NODE", "8(x2),4"},
                   {"SLURM_NTASKS", "9"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  EXPECT_EQ(c.source, "slurm");
  ASSERT_EQ(hosts_of(c), (Hosts{"node1", "node2", "node3"}));
  EXPECT_EQ(c.nodes[0].gpus, 2);
  EXPECT_EQ(c.nodes[2].gpus, 2);
  EXPECT_EQ(c.nodes[0].cores, 8);
  EXPECT_EQ(c.nodes[1].cores, 8);
  EXPECT_EQ(c.nodes[2].cores, 4);
}

// A list of 200,000 hosts, one of its ranges repeated: each host is one node,
// in the list's order. (Each host searching the ones before it took minutes
// here: fuzz_cluster's finding.)
TEST(Discover, SlurmListOfManyHosts) {
  // 100,000 names, the most a list may have; 75,000 hosts once repeats go.
  Environment env({{"SLURM_JOB_NODELIST", "n[1-50000],m[1-25000],n[1-25000]"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  ASSERT_EQ(c.nodes.size(), 75000u);
  EXPECT_EQ(c.nodes[0].host, "n1");
  EXPECT_EQ(c.nodes[49999].host, "n50000");
  EXPECT_EQ(c.nodes[50000].host, "m1");
}

// Recorded from Slurm 22.05 batch scripts (the environment sbatch gives).
TEST(Discover, SlurmTasksOnlyWhenAsked) {
  // sbatch -N 2: nodes, not tasks (Slurm still says one task a node).
  Environment env({{"SLURM_JOB_ID", "7"},
                   {"SLURM_JOB_NODELIST", "nodea,nodeb"},
                   {"SLURM_JOB_CPUS_PER_NODE", "2(x2)"},
                   {"SLURM_TASKS_PER_NODE", "1(x2)"},
                   {"SLURM_NNODES", "2"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  EXPECT_EQ(c.nodes[0].tasks, 0);
  EXPECT_EQ(c.nodes[1].tasks, 0);
  // sbatch -N 2 -n 3: Slurm puts 2 on the first node, 1 on the second.
  env.set("SLURM_NTASKS", "3");
  env.set("SLURM_NPROCS", "3");
  env.set("SLURM_TASKS_PER_NODE", "2,1");
  c = discover_cluster(env, local_opts());
  EXPECT_EQ(c.nodes[0].tasks, 2);
  EXPECT_EQ(c.nodes[1].tasks, 1);
}

TEST(Discover, SlurmNtasksPerNode) {
  Environment env({{"SLURM_JOB_NODELIST", "gpu[1-3]"},
                   {"SLURM_NTASKS_PER_NODE", "4"},
                   {"SLURM_TASKS_PER_NODE", "4(x3)"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  for (const Node& n : c.nodes) EXPECT_EQ(n.tasks, 4);
  // Without SLURM_TASKS_PER_NODE (an environment written by hand).
  c = discover_cluster(
      Environment({{"SLURM_JOB_NODELIST", "gpu[1-3]"}, {"SLURM_NTASKS_PER_NODE", "2"}}),
      local_opts());
  for (const Node& n : c.nodes) EXPECT_EQ(n.tasks, 2);
}

TEST(Discover, SlurmNtasksAloneSpreadsInBlocks) {
  ClusterSpec c = discover_cluster(
      Environment({{"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_NTASKS", "7"}}), local_opts());
  EXPECT_EQ(c.nodes[0].tasks, 3);
  EXPECT_EQ(c.nodes[1].tasks, 2);
  EXPECT_EQ(c.nodes[2].tasks, 2);
}

TEST(Discover, SlurmTaskErrors) {
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"SLURM_JOB_NODELIST", "n[1-3]"},
                                      {"SLURM_NTASKS", "4"},
                                      {"SLURM_TASKS_PER_NODE", "2(x2)"}}),
                         {});
      },
      {"SLURM_TASKS_PER_NODE='2(x2)'", "2 nodes", "lists 3"});
  expect_usage_error(
      [] {
        discover_cluster(
            Environment({{"SLURM_JOB_NODELIST", "n1"}, {"SLURM_NTASKS_PER_NODE", "four"}}), {});
      },
      {"SLURM_NTASKS_PER_NODE", "'four'"});
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"SLURM_JOB_NODELIST", "n1"},
                                      {"SLURM_NTASKS", "2"},
                                      {"SLURM_TASKS_PER_NODE", "2(x"}}),
                         {});
      },
      {"SLURM_TASKS_PER_NODE", "N(xM)"});
}

// Counts past what any node has, and repeats past the node list, are refused
// before anything is built for them (fuzz_cluster: "1(x999999999)" asked for
// 4 GB; three hostfile lines of 999,999,999 slots overflowed their sum).
TEST(Discover, CountsNoNodeHasAreRefused) {
  const auto slurm = [](std::map<std::string, std::string> vars) {
    vars["SLURM_JOB_NODELIST"] = "n[1-3]";
    return [vars] { discover_cluster(Environment(vars), {}); };
  };
  expect_usage_error(slurm({{"SLURM_NTASKS", "5"}, {"SLURM_TASKS_PER_NODE", "1(x999999999)"}}),
                     {"SLURM_TASKS_PER_NODE='1(x999999999)'", "999999999 nodes", "lists 3"});
  expect_usage_error(slurm({{"SLURM_NTASKS", "5"}, {"SLURM_TASKS_PER_NODE", "1,1(x3)"}}),
                     {"SLURM_TASKS_PER_NODE", "4 nodes", "lists 3"});
  expect_usage_error(slurm({{"SLURM_NTASKS_PER_NODE", "65537"}}),
                     {"SLURM_NTASKS_PER_NODE", "65537 on one node", "at most 65536"});
  expect_usage_error(slurm({{"SLURM_JOB_CPUS_PER_NODE", "999999999(x3)"}}),
                     {"SLURM_JOB_CPUS_PER_NODE", "999999999 on one node"});
  expect_usage_error(slurm({{"SLURM_GPUS_ON_NODE", "70000"}}),
                     {"SLURM_GPUS_ON_NODE", "70000 on one node"});
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"LSB_MCPU_HOSTS", "a 999999999"}}), {});
      },
      {"LSB_MCPU_HOSTS", "host 'a'", "999999999 on one node"});
  TempFile f("a slots=999999999\na slots=999999999\na slots=999999999\n");
  DiscoverOptions o;
  o.hostfile = f.path();
  expect_usage_error([&] { discover_cluster(Environment{}, o); },
                     {"hostfile", "line 1", "host 'a'", "999999999 on one node"});
  TempFile g("a slots=40000\nb\na slots=30000\n");
  o.hostfile = g.path();
  expect_usage_error([&] { discover_cluster(Environment{}, o); },
                     {"hostfile", "line 3", "host 'a'", "70000 on one node"});
}

TEST(Discover, SlurmStepListAndUnknownCores) {
  Environment env({{"SLURM_STEP_NODELIST", "gpu[01-02]"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  ASSERT_EQ(hosts_of(c), (Hosts{"gpu01", "gpu02"}));
  EXPECT_EQ(c.nodes[0].gpus, 0);
  EXPECT_EQ(c.nodes[0].cores, 2);  // unknown: this machine's count
}

TEST(Discover, SlurmCpusPerNodeErrors) {
  expect_usage_error(
      [] {
        discover_cluster(
            Environment({{"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_JOB_CPUS_PER_NODE", "4(x2)"}}),
            {});
      },
      {"SLURM_JOB_CPUS_PER_NODE", "2 nodes", "lists 3"});
  expect_usage_error(
      [] {
        discover_cluster(
            Environment({{"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_JOB_CPUS_PER_NODE", "4(x2"}}),
            {});
      },
      {"SLURM_JOB_CPUS_PER_NODE", "N(xM)"});
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"SLURM_JOB_NODELIST", "n1"}, {"SLURM_GPUS_ON_NODE", "two"}}),
                         {});
      },
      {"SLURM_GPUS_ON_NODE", "'two'"});
}

TEST(Discover, LsfMcpuHostsSkipsTheLaunchNode) {
  // As on Summit: the batch node comes first and runs no ranks.
  Environment env({{"LSB_JOBID", "12345"},
                   {"LSB_MCPU_HOSTS", "batch3 1 a01n01 42 a01n02 42"},
                   {"LSB_HOSTS", "batch3 a01n01 a01n02"},
                   {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  EXPECT_EQ(c.source, "lsf");
  ASSERT_EQ(hosts_of(c), (Hosts{"a01n01", "a01n02"}));
  EXPECT_EQ(c.nodes[0].slots, 42);
  EXPECT_EQ(c.nodes[0].cores, 42);
  EXPECT_EQ(c.nodes[1].gpus, 6);
  EXPECT_EQ(c.nodes[0].tasks, 0);  // GPU nodes: slots count cores, one worker a GPU
}

TEST(Discover, LsfHostsOneEntryPerSlot) {
  Environment env({{"LSB_HOSTS", "login1 h2 h2 h1 h2 h1"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  ASSERT_EQ(hosts_of(c), (Hosts{"h2", "h1"}));
  EXPECT_EQ(c.nodes[0].slots, 3);
  EXPECT_EQ(c.nodes[1].slots, 2);
  EXPECT_EQ(c.nodes[1].cores, 2);
  EXPECT_EQ(c.nodes[0].tasks, 3);  // CPU nodes: bsub -n asked for these slots
  EXPECT_EQ(c.nodes[1].tasks, 2);
}

TEST(Discover, LsfErrors) {
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"LSB_MCPU_HOSTS", "batch1 1 h1"}}), {});
      },
      {"LSB_MCPU_HOSTS", "pairs"});
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"LSB_MCPU_HOSTS", "h1 many"}}), {});
      },
      {"LSB_MCPU_HOSTS", "h1", "'many'"});
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"LSB_HOSTS", "batch1 login2"}}), {});
      },
      {"LSB_HOSTS", "only launch hosts"});
}

TEST(Discover, PbsNodefileCountsSlotsInFirstSeenOrder) {
  TempFile f("n2\nn2\nn1\n\nn2\nn1\n");
  Environment env({{"PBS_NODEFILE", f.path()}, {"PBS_JOBID", "7.server"}});
  ClusterSpec c = discover_cluster(env, local_opts());
  EXPECT_EQ(c.source, "pbs");
  ASSERT_EQ(hosts_of(c), (Hosts{"n2", "n1"}));
  EXPECT_EQ(c.nodes[0].slots, 3);
  EXPECT_EQ(c.nodes[1].slots, 2);
  EXPECT_EQ(c.nodes[0].tasks, 3);  // one line per mpiprocs
  env.set("CUDA_VISIBLE_DEVICES", "0,1");
  EXPECT_EQ(discover_cluster(env, local_opts()).nodes[0].tasks, 0);
}

TEST(Discover, PbsErrors) {
  expect_usage_error(
      [] {
        discover_cluster(Environment({{"PBS_NODEFILE", "/nonexistent/nodes"}}), {});
      },
      {"PBS_NODEFILE", "/nonexistent/nodes", "cannot open"});
  TempFile empty("\n");
  expect_usage_error(
      [&] {
        discover_cluster(Environment({{"PBS_NODEFILE", empty.path()}}), {});
      },
      {"PBS_NODEFILE", "no host"});
}

TEST(Discover, Hostfile) {
  TempFile f(
      "# two big nodes and one of unknown size\nh1 slots=4\n  h2 slots=2 max_slots=8  # x\n\nh3\n");
  DiscoverOptions o = local_opts();
  o.hostfile = f.path();
  o.gpus_per_node = 1;
  ClusterSpec c = discover_cluster(Environment{}, o);
  EXPECT_EQ(c.source, "hostfile");
  ASSERT_EQ(hosts_of(c), (Hosts{"h1", "h2", "h3"}));
  EXPECT_EQ(c.nodes[0].slots, 4);
  EXPECT_EQ(c.nodes[1].cores, 2);
  EXPECT_EQ(c.nodes[2].slots, 0);  // Open MPI would use the host's cores
  EXPECT_EQ(c.nodes[2].cores, 2);
  EXPECT_EQ(c.nodes[2].gpus, 1);
  EXPECT_EQ(c.nodes[0].tasks, 0);  // a hostfile's slots are room, not a request
}

TEST(Discover, HostfileErrorsNameFileAndLine) {
  auto bad = [](const std::string& text, std::initializer_list<std::string> parts) {
    TempFile f(text);
    DiscoverOptions o;
    o.hostfile = f.path();
    SCOPED_TRACE(text);
    expect_usage_error([&] { discover_cluster(Environment{}, o); }, parts);
  };
  bad("h1 slots=2\nh2 slotz=4\n", {"hostfile", "line 2", "slotz=4"});
  bad("h1 slots=x\n", {"line 1", "'x' is not a count"});
  bad("h1 slots=0\n", {"line 1", "at least 1"});
  bad("# nothing\n", {"lists no host"});
  DiscoverOptions o;
  o.hostfile = "/nonexistent/hosts";
  expect_usage_error([&] { discover_cluster(Environment{}, o); },
                     {"/nonexistent/hosts", "cannot open"});
}

TEST(Discover, OrderSlurmLsfPbsHostfileLocal) {
  TempFile nodefile("p1\n");
  TempFile hostfile("f1\n");
  DiscoverOptions o = local_opts();
  o.hostfile = hostfile.path();
  Environment env(
      {{"SLURM_JOB_NODELIST", "s1"}, {"LSB_HOSTS", "l1"}, {"PBS_NODEFILE", nodefile.path()}});
  EXPECT_EQ(discover_cluster(env, o).source, "slurm");
  env = Environment({{"LSB_HOSTS", "l1"}, {"PBS_NODEFILE", nodefile.path()}});
  EXPECT_EQ(discover_cluster(env, o).source, "lsf");
  env = Environment({{"PBS_NODEFILE", nodefile.path()}, {"SLURM_JOB_NODELIST", ""}});
  EXPECT_EQ(discover_cluster(env, o).source, "pbs");
  EXPECT_EQ(discover_cluster(Environment{}, o).source, "hostfile");
  o.hostfile.clear();
  ClusterSpec c = discover_cluster(Environment{}, o);
  EXPECT_EQ(c.source, "local");
  ASSERT_EQ(hosts_of(c), (Hosts{"box"}));
  EXPECT_EQ(c.nodes[0].cores, 2);
  EXPECT_EQ(discover_cluster(Environment{}, {}).nodes[0].host, "localhost");
}

TEST(Discover, GpusPerNodeOrder) {
  auto gpus = [](Environment env, int opt_gpus = -1) {
    DiscoverOptions o = local_opts();
    o.gpus_per_node = opt_gpus;
    return discover_cluster(env, o).nodes[0].gpus;
  };
  EXPECT_EQ(gpus({}), 0);
  EXPECT_EQ(gpus({{"SLURM_GPUS_ON_NODE", "4"}}), 4);
  EXPECT_EQ(gpus({{"SLURM_GPUS_ON_NODE", "4"}, {"CUDA_VISIBLE_DEVICES", "2,3"}}), 2);
  EXPECT_EQ(gpus({{"SLURM_GPUS_ON_NODE", "4"}, {"CUDA_VISIBLE_DEVICES", ""}}), 0);
  EXPECT_EQ(gpus({{"CUDA_VISIBLE_DEVICES", "NoDevFiles"}}), 0);
  EXPECT_EQ(gpus({{"CUDA_VISIBLE_DEVICES", "0,1"}}, 3), 3);
  EXPECT_EQ(gpus({{"CUDA_VISIBLE_DEVICES", "0,1"}}, 0), 0);
}

TEST(Discover, CountVisibleDevices) {
  EXPECT_EQ(count_visible_devices("0"), 1);
  EXPECT_EQ(count_visible_devices("0,1,2,3"), 4);
  EXPECT_EQ(count_visible_devices("GPU-8932f937,GPU-1a2b"), 2);
  EXPECT_EQ(count_visible_devices("-1"), 0);
  EXPECT_EQ(count_visible_devices("0,-1,1"), 1);
}

TEST(Environment, FromProcessSeesItsVariables) {
  ::setenv("DRUN_DIST_TEST_VAR", "a=b", 1);
  Environment env = Environment::from_process();
  EXPECT_EQ(env.get("DRUN_DIST_TEST_VAR"), "a=b");
  EXPECT_FALSE(env.get("DRUN_DIST_TEST_UNSET_VAR").has_value());
  ::unsetenv("DRUN_DIST_TEST_VAR");
}

}  // namespace
}  // namespace drun::launch

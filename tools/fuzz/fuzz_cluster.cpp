// Cluster discovery (runtime/launch/cluster.cpp) and placement: the first
// byte picks the source, the rest (split at newlines where a source has
// several variables) is what the scheduler or the user wrote.
#include <sstream>
#include <vector>

#include "fuzz_input.hpp"
#include "launch/cluster.hpp"
#include "launch/placement.hpp"

namespace {
std::vector<std::string> lines(const std::string& text, size_t n) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; out.size() + 1 < n && std::getline(in, line);) out.push_back(line);
  std::string rest;
  std::getline(in, rest, '\0');
  out.push_back(rest);
  out.resize(n);
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace drun::launch;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  Environment env;
  DiscoverOptions opt;
  opt.local_cores = 4;
  switch (data[0] % 6) {
    case 0:
      drun::fuzz::expect_clean([&] { expand_slurm_nodelist(text); });
      return 0;
    case 1: {  // node list, cpus per node, tasks per node, ntasks, ntasks per node, GPUs
      const auto v = lines(text, 6);
      const char* names[] = {"SLURM_JOB_NODELIST",    "SLURM_JOB_CPUS_PER_NODE",
                             "SLURM_TASKS_PER_NODE",  "SLURM_NTASKS",
                             "SLURM_NTASKS_PER_NODE", "SLURM_GPUS_ON_NODE"};
      for (size_t i = 0; i < v.size(); ++i) env.set(names[i], v[i]);
      break;
    }
    case 2: {
      const auto v = lines(text, 2);
      env.set("LSB_MCPU_HOSTS", v[0]);
      env.set("LSB_HOSTS", v[1]);
      break;
    }
    case 3:
      env.set("PBS_NODEFILE", drun::fuzz::as_file("nodefile", data + 1, size - 1));
      break;
    case 4:
      opt.hostfile = drun::fuzz::as_file("hostfile", data + 1, size - 1);
      break;
    case 5:
      drun::fuzz::expect_clean([&] { count_visible_devices(text); });
      env.set("CUDA_VISIBLE_DEVICES", text);
      opt.hostfile = drun::fuzz::as_file("hostfile", data + 1, size - 1);
      break;
  }
  drun::fuzz::expect_clean([&] {
    const ClusterSpec cluster = discover_cluster(env, opt);
    PlacementOptions placement;
    placement.total_ps = data[0] & 0x40 ? 1 : 0;
    const auto ranks = place(cluster, placement);
    placement_table(ranks);
    // Each rank builds its own TF_CONFIG, once (O(ranks) each): the first,
    // a middle and the last rank's stand for all (64 of them on a list of
    // 17,000 hosts took 14 s under ASan).
    for (const size_t r : {size_t{0}, ranks.size() / 2, ranks.size() - 1})
      if (r < ranks.size()) tf_config(ranks, static_cast<int>(r));
  });
  return 0;
}

// jsrun's explicit resource file from a role table: a resource set per rank on
// its host, its cores' hardware threads, a worker's one GPU.
#include "launch/jsrun_erf.hpp"

#include <gtest/gtest.h>

#include "usage_error.hpp"

namespace drun::launch {
namespace {

// Two POWER9 nodes of 42 cores and 6 GPUs, as LSF describes them.
ClusterSpec two_power9_nodes() {
  return ClusterSpec{"lsf", {Node{"h1", 6, 42, 42}, Node{"h2", 6, 42, 42}}};
}

TEST(JsrunErf, OneResourceSetPerRankWithItsGpuAndCores) {
  const ClusterSpec cluster = two_power9_nodes();
  PlacementOptions opt;
  opt.needs_ps = true;
  const auto ranks = place(cluster, opt);  // per node: a ps, then 6 workers
  ASSERT_EQ(ranks.size(), 14u);
  const std::string erf = jsrun_erf(ranks, cluster, 4);
  EXPECT_EQ(erf.rfind("cpu_index_using: logical\n", 0), 0u);
  // 7 ranks share a node's 42 cores: 6 cores, 24 hardware threads each.
  EXPECT_NE(erf.find("rank: 0: { hostname: h1; cpu: {0-23} }\n"), std::string::npos) << erf;
  EXPECT_NE(erf.find("rank: 1: { hostname: h1; cpu: {24-47} ; gpu: {0} }\n"), std::string::npos)
      << erf;
  EXPECT_NE(erf.find("rank: 6: { hostname: h1; cpu: {144-167} ; gpu: {5} }\n"), std::string::npos)
      << erf;
  EXPECT_NE(erf.find("rank: 7: { hostname: h2; cpu: {0-23} }\n"), std::string::npos) << erf;
  EXPECT_NE(erf.find("rank: 13: { hostname: h2; cpu: {144-167} ; gpu: {5} }\n"), std::string::npos)
      << erf;
}

TEST(JsrunErf, RanksAskingForMoreCoresThanTheHostHasWrapAround) {
  const ClusterSpec cluster{"lsf", {Node{"h1", 0, 4, 4}}};
  const std::vector<RankInfo> ranks = {{0, "h1", 0, "chief", 0, -1, 3},
                                       {1, "h1", 0, "worker", 0, -1, 3}};
  const std::string erf = jsrun_erf(ranks, cluster, 1);
  EXPECT_NE(erf.find("rank: 0: { hostname: h1; cpu: {0-2} }"), std::string::npos) << erf;
  EXPECT_NE(erf.find("rank: 1: { hostname: h1; cpu: {0-2} }"), std::string::npos) << erf;
  EXPECT_NE(erf.find("oversubscribe_cpu: allow"), std::string::npos);
}

TEST(JsrunErf, HardwareThreadsPerCoreMustBePositive) {
  testing::expect_usage_error([] { jsrun_erf({}, two_power9_nodes(), 0); },
                              {"hardware threads per core", "0"});
}

}  // namespace
}  // namespace drun::launch

// A lost node: the cluster without it, placed again; DRUN_RESIZED's text both ways.
#include "launch/resize.hpp"

#include <gtest/gtest.h>

#include "launch/placement.hpp"

namespace drun::launch {
namespace {

ClusterSpec two_nodes() {
  ClusterSpec c;
  c.source = "slurm";
  c.nodes = {{.host = "nodea", .cores = 2, .tasks = 2}, {.host = "nodeb", .cores = 2, .tasks = 2}};
  return c;
}

TEST(Resize, PlacesTheWorkersOfTheNodesLeft) {
  PlacementOptions opt;
  EXPECT_EQ(place(two_nodes(), opt).size(), 4u);
  const auto ranks = place(without_host(two_nodes(), "nodeb"), opt);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].role, "chief");
  EXPECT_EQ(ranks[1].host, "nodea");
  // With parameter servers: the node left's server among its tasks.
  opt.needs_ps = true;
  const auto with_ps = place(without_host(two_nodes(), "nodeb"), opt);
  ASSERT_EQ(with_ps.size(), 2u);
  EXPECT_EQ(with_ps[0].role, "ps");
  EXPECT_EQ(with_ps[1].role, "chief");
  EXPECT_EQ(without_host(two_nodes(), "nodec").nodes.size(), 2u);
}

TEST(Resize, TextRoundTrips) {
  const std::vector<Resize> r = {{"nodeb", 120, 4, 2}, {"nodec", 300, 2, 1}};
  EXPECT_EQ(resizes_text(r), "nodeb:120:4:2,nodec:300:2:1");
  const auto back = parse_resizes(resizes_text(r));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].lost_node, "nodec");
  EXPECT_EQ(back[1].step, 300);
  EXPECT_EQ(back[1].workers_after, 1);
  EXPECT_TRUE(parse_resizes("").empty());
  EXPECT_EQ(resizes_json(r)[0]["workers_before"], 4);
}

TEST(Resize, MalformedTextIsNamed) {
  for (const char* bad : {"nodeb:120:4", "nodeb:x:4:2", ":1:4:2", "nodeb:1:0:2"}) {
    try {
      parse_resizes(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("DRUN_RESIZED"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace drun::launch

// The rank a dead job's starter names: lines recorded from Open MPI 4.1's
// mpirun and Slurm 22.05's srun.
#include "launch/rank_death.hpp"

#include <gtest/gtest.h>

namespace drun::launch {
namespace {

TEST(RankDeath, MpirunNamesRankHostAndSignal) {
  auto d = parse_rank_death(
      "mpirun noticed that process rank 1 with PID 0 on node box exited on signal 9 (Killed).");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->rank, 1);
  EXPECT_EQ(d->host, "box");
  EXPECT_EQ(d->how, "signal 9 (Killed)");
}

TEST(RankDeath, SrunNamesTaskAndHost) {
  auto d = parse_rank_death("srun: error: nodeb: task 2: Killed");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->rank, 2);
  EXPECT_EQ(d->host, "nodeb");
  EXPECT_EQ(d->how, "Killed");
  d = parse_rank_death("srun: error: nodea: tasks 0-1: Segmentation fault");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->rank, 0);
  EXPECT_EQ(d->how, "Segmentation fault");
}

TEST(RankDeath, TheStallInspectorNamesASilentRank) {
  auto d = parse_rank_death(
      "drun: stall: rank 1 (worker 0) on host nodeb has not been heard from for 12 s (last seen "
      "at step 340, computing); rank 0 has waited in MPI_Waitall for 11 s. Ending the job "
      "(--stall-timeout 10).");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->rank, 1);
  EXPECT_EQ(d->host, "nodeb");
  EXPECT_EQ(d->how, "stalled");
}

TEST(RankDeath, TheStarterNamesALostNode) {
  auto d = parse_rank_death("srun: error: Node failure on nodeb");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->node_lost);
  EXPECT_EQ(d->host, "nodeb");
  d = parse_rank_death("  Remote daemon: [[57640,0],1] on node nodeb");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->node_lost);
  EXPECT_EQ(d->host, "nodeb");
  EXPECT_FALSE(parse_rank_death("  HNP daemon   : [[57640,0],0] on node nodea"));
  EXPECT_FALSE(parse_rank_death("srun: error: nodea: tasks 0-1: Killed")->node_lost);
}

TEST(RankDeath, ErrorExitsAndOtherLinesAreNoDeath) {
  EXPECT_FALSE(parse_rank_death("srun: error: nodeb: task 1: Exited with exit code 1"));
  EXPECT_FALSE(parse_rank_death("drun: [rank 1, worker 0] error: bad shape"));
  EXPECT_FALSE(parse_rank_death("Primary job  terminated normally, but 1 process returned"));
  EXPECT_FALSE(parse_rank_death(""));
}

}  // namespace
}  // namespace drun::launch

// The stall inspector's judgement and message (the thread and the files are
// tested end to end by tests/dist/stall_test.py), and the waiting record the
// Communicator keeps.
#include "distributed/stall_inspector.hpp"

#include <gtest/gtest.h>

#include "distributed/activity.hpp"

namespace drun::distributed {
namespace {

Heartbeat beat(int rank, double time, std::string waiting = "", double since = 0) {
  Heartbeat h;
  h.rank = rank;
  h.host = rank == 0 ? "nodea" : "nodeb";
  h.role = rank == 0 ? "chief" : "worker";
  h.task_index = 0;
  h.step = 340;
  h.waiting = std::move(waiting);
  h.waiting_since = since;
  h.time = time;
  return h;
}

TEST(StallInspector, NamesOnlyRanksSilentLongerThanTheTimeout) {
  const Heartbeat me = beat(0, 100, "MPI_Waitall", 88);  // waited 12 s
  const std::vector<Heartbeat> all = {me, beat(1, 88), beat(2, 95), beat(3, 85)};
  const auto stalled = stalled_ranks(me, all, 100, 10);
  ASSERT_EQ(stalled.size(), 2u);
  EXPECT_EQ(stalled[0].rank, 3);  // the longest silent first
  EXPECT_EQ(stalled[1].rank, 1);
}

TEST(StallInspector, NoJudgementUnlessThisRankWaitedLongerThanTheTimeout) {
  const std::vector<Heartbeat> others = {beat(1, 50)};
  EXPECT_TRUE(stalled_ranks(beat(0, 100), others, 100, 10).empty());  // computing
  EXPECT_TRUE(stalled_ranks(beat(0, 100, "MPI_Bcast", 95), others, 100, 10).empty());
  EXPECT_EQ(stalled_ranks(beat(0, 100, "MPI_Bcast", 80), others, 100, 10).size(), 1u);
}

TEST(StallInspector, ABusyRankIsNoStall) {
  // Rank 0 evaluates for 30 s: its heartbeat stays fresh, so the waiting rank names nobody.
  const Heartbeat waiting = beat(1, 130, "MPI_Bcast", 100);
  EXPECT_TRUE(stalled_ranks(waiting, {beat(0, 129.5), waiting}, 130, 10).empty());
}

TEST(StallInspector, MessageNamesRankHostStepAndExchanges) {
  EXPECT_EQ(stall_message(beat(1, 88), beat(0, 100, "MPI_Waitall", 89), 100, 10),
            "drun: stall: rank 1 (worker 0) on host nodeb has not been heard from for 12 s (last "
            "seen at step 340, computing); rank 0 has waited in MPI_Waitall for 11 s. Ending the "
            "job (--stall-timeout 10).");
  EXPECT_NE(stall_message(beat(1, 88, "MPI_Recv", 80), beat(0, 100, "MPI_Send", 89), 100, 10)
                .find("waiting in MPI_Recv"),
            std::string::npos);
}

TEST(StallInspector, HeartbeatsRoundTripThroughJson) {
  const Heartbeat h = beat(1, 12.5, "MPI_Barrier", 11.25);
  const Heartbeat back = heartbeat_from_json(json::parse(to_json(h).dump()));
  EXPECT_EQ(back.rank, 1);
  EXPECT_EQ(back.host, "nodeb");
  EXPECT_EQ(back.waiting, "MPI_Barrier");
  EXPECT_DOUBLE_EQ(back.waiting_since, 11.25);
  EXPECT_DOUBLE_EQ(back.time, 12.5);
}

TEST(Activity, WaitingScopesNestAndEnd) {
  EXPECT_EQ(activity::waiting_in(), nullptr);
  {
    activity::Waiting outer("MPI_Waitall");
    {
      activity::Waiting inner("MPI_Test");
      EXPECT_STREQ(activity::waiting_in(), "MPI_Waitall");  // the outer one is what it waits for
    }
    EXPECT_STREQ(activity::waiting_in(), "MPI_Waitall");
    EXPECT_GT(activity::waiting_since(), 0);
  }
  EXPECT_EQ(activity::waiting_in(), nullptr);
  activity::set_step(42);
  EXPECT_EQ(activity::step(), 42);
}

}  // namespace
}  // namespace drun::distributed

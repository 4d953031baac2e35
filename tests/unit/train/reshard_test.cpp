// epoch_resume: where a worker goes on after a checkpoint of another worker count.
#include "train/reshard.hpp"

#include <gtest/gtest.h>

namespace drun::train {
namespace {

TrainingState at(int64_t epoch, int64_t batch, int workers, int64_t offset = 0) {
  TrainingState s;
  s.global_step = 100;
  s.epoch = epoch;
  s.batch = batch;
  s.workers = workers;
  s.epoch_offset = offset;
  return s;
}

TEST(EpochResume, TheSameWorkerCountContinuesAtItsBatch) {
  const EpochResume r = epoch_resume(at(2, 5, 4), 4, 32, 4096);
  EXPECT_FALSE(r.resharded);
  EXPECT_EQ(r.epoch, 2);
  EXPECT_EQ(r.batch, 5);
  // A checkpoint that does not say its workers (made before drun recorded them).
  EXPECT_FALSE(epoch_resume(at(2, 5, 0), 2, 32, 4096).resharded);
}

TEST(EpochResume, FewerWorkersGoOnWhereAllWere) {
  // 4 workers, 8 batches of 32: positions [0, 1024) consumed.
  const EpochResume r = epoch_resume(at(1, 8, 4), 2, 32, 4096);
  EXPECT_TRUE(r.resharded);
  EXPECT_EQ(r.epoch, 1);
  EXPECT_EQ(r.offset, 1024);
  // Lost again at the same count: from where the continued epoch had reached.
  const EpochResume again = epoch_resume(at(1, 4, 2, 1024), 2, 32, 4096);
  EXPECT_TRUE(again.resharded);
  EXPECT_EQ(again.offset, 1024 + 4 * 32 * 2);
}

TEST(EpochResume, AShortLastBatchCountsWhatItHeld) {
  // 1000 examples over 4 workers: shards of 250, 8 batches of 32 the last of 26.
  const EpochResume done = epoch_resume(at(0, 8, 4), 2, 32, 1000);
  EXPECT_FALSE(done.resharded);
  EXPECT_EQ(done.epoch, 1);
  EXPECT_EQ(done.batch, 0);
  EXPECT_EQ(epoch_resume(at(0, 7, 4), 2, 32, 1000).offset, 7 * 32 * 4);
}

}  // namespace
}  // namespace drun::train

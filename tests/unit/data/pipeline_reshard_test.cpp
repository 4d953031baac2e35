// Pipeline::seek_from: W workers stop mid-epoch, W' workers go on from the
// position they had reached together; the epoch's examples are each seen once.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "base/options.hpp"
#include "data/pipeline.hpp"

namespace drun::data {
namespace {

// n examples whose targets are their indices.
std::shared_ptr<const Dataset> numbered(int64_t n) {
  auto d = std::make_shared<Dataset>();
  d->x = Tensor({n, 1});
  d->y = Tensor({n}, DType::i32);
  for (int64_t i = 0; i < n; ++i) {
    d->x.f32()[i] = static_cast<float>(i);
    d->y.i32()[i] = static_cast<int32_t>(i);
  }
  return d;
}

PipelineSpec worker(int64_t count, int64_t index, int64_t prefetch) {
  PipelineSpec s;
  s.batch_size = 4;
  s.shuffle = true;
  s.seed = 7;
  s.shard_count = count;
  s.shard_index = index;
  s.prefetch = prefetch;
  return s;
}

// The targets of the next `batches` batches (all that are left: -1).
std::vector<int32_t> take(Pipeline& p, int64_t batches) {
  std::vector<int32_t> ids;
  Batch b;
  for (int64_t i = 0; (batches < 0 || i < batches) && p.next(b); ++i)
    for (int64_t k = 0; k < b.size; ++k) ids.push_back(b.y.i32()[k]);
  return ids;
}

TEST(PipelineReshard, FewerWorkersFinishTheEpochOnceOver) {
  // 4 workers train 3 batches of 4 of epoch 1, then 2 workers the rest: 96
  // examples, 48 consumed together, 24 more each.
  for (int64_t prefetch : {0, 2}) {
    std::multiset<int32_t> seen;
    for (int64_t k = 0; k < 4; ++k) {
      Pipeline p(numbered(96), worker(4, k, prefetch));
      p.start_epoch(1);
      for (int32_t id : take(p, 3)) seen.insert(id);
    }
    for (int64_t k = 0; k < 2; ++k) {
      Pipeline p(numbered(96), worker(2, k, prefetch));
      p.seek_from(1, 48);
      EXPECT_EQ(p.offset(), 48);
      EXPECT_EQ(p.batches_per_epoch(), 6);
      EXPECT_EQ(p.examples_per_epoch(), 24);
      EXPECT_EQ(p.examples_of(0).size(), 4u);
      for (int32_t id : take(p, -1)) seen.insert(id);
    }
    ASSERT_EQ(seen.size(), 96u);
    for (int32_t i = 0; i < 96; ++i) EXPECT_EQ(seen.count(i), 1u) << "example " << i;
  }
}

TEST(PipelineReshard, TheNextEpochIsAnOrdinaryOne) {
  Pipeline cut(numbered(40), worker(2, 1, 0)), plain(numbered(40), worker(2, 1, 0));
  cut.seek_from(0, 8);
  take(cut, -1);
  cut.start_epoch(1);
  plain.start_epoch(1);
  EXPECT_EQ(cut.offset(), 0);
  EXPECT_EQ(cut.batches_per_epoch(), plain.batches_per_epoch());
  EXPECT_EQ(take(cut, -1), take(plain, -1));
}

TEST(PipelineReshard, ContinuesOnlyWhatHasOnePosition) {
  Pipeline p(numbered(40), worker(2, 0, 0));
  EXPECT_THROW(p.seek_from(0, 41), UsageError);
  PipelineSpec repeated = worker(2, 0, 0);
  repeated.repeat = 2;
  Pipeline r(numbered(40), repeated);
  EXPECT_THROW(r.seek_from(0, 8), UsageError);
}

}  // namespace
}  // namespace drun::data

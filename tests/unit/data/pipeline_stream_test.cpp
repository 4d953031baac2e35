// A pipeline over a streamed data set (Dataset::rows, as data.hdf5 streams):
// the workers' shards of a pass are disjoint and complete, the shuffle buffer's
// order is a function of the seed and epoch alone, a seek (a resume) continues
// with exactly the examples an uninterrupted run sees, prefetch changes
// nothing, and reads go block by block, never beyond one block's rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>

#include "data/pipeline.hpp"
#include "data/stream_layout.hpp"

namespace drun::data {
namespace {

// Row i of x is the float i; blocks of `block` rows; counts what it reads.
class FakeRows final : public RowSource {
 public:
  FakeRows(int64_t n, int64_t block) : n_(n) {
    for (int64_t b = 0; b < n; b += block) blocks_.push_back({b, std::min(n, b + block)});
  }
  int64_t size() const override { return n_; }
  Shape example_shape() const override { return Shape{1}; }
  DType dtype() const override { return DType::f32; }
  const std::vector<RowBlock>& blocks() const override { return blocks_; }
  void read(int64_t begin, int64_t end, void* dst) const override {
    auto* out = static_cast<float*>(dst);
    for (int64_t r = begin; r < end; ++r) out[r - begin] = static_cast<float>(r);
    rows_read += end - begin;
    int64_t most = largest_read.load();
    while (end - begin > most && !largest_read.compare_exchange_weak(most, end - begin)) {
    }
  }
  mutable std::atomic<int64_t> rows_read{0}, largest_read{0};

 private:
  int64_t n_;
  std::vector<RowBlock> blocks_;
};

struct Streamed {
  std::shared_ptr<FakeRows> rows;
  std::shared_ptr<const Dataset> data;
};

Streamed streamed(int64_t n, int64_t block) {
  Streamed s;
  s.rows = std::make_shared<FakeRows>(n, block);
  auto d = std::make_shared<Dataset>();
  d->y = Tensor(Shape{n}, DType::i32);
  for (int64_t i = 0; i < n; ++i) d->y.i32()[i] = static_cast<int32_t>(i);  // y is the row too
  d->rows = s.rows;
  s.data = d;
  return s;
}

PipelineSpec spec(int64_t batch, int64_t buffer, int64_t prefetch = 0) {
  PipelineSpec p;
  p.shuffle = buffer > 0;
  p.seed = 7;
  p.shuffle_buffer = buffer;
  p.batch_size = batch;
  p.prefetch = prefetch;
  return p;
}

// The rows of batches [from, end) of an epoch, after a seek to `from`; each
// batch's x and y are checked to be the same row.
std::vector<int64_t> rows_of(Pipeline& p, int64_t epoch, int64_t from = 0) {
  std::vector<int64_t> rows;
  Batch b;
  p.seek(epoch, from);
  while (p.next(b))
    for (int64_t k = 0; k < b.size; ++k) {
      EXPECT_EQ(b.x.f32()[k], static_cast<float>(b.y.i32()[k]));
      rows.push_back(b.y.i32()[k]);
    }
  return rows;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

TEST(PipelineStream, WithoutShuffleReadsTheFileInOrder) {
  auto s = streamed(103, 10);
  Pipeline p(s.data, spec(8, 0));
  EXPECT_EQ(p.batches_per_epoch(), 13);
  EXPECT_EQ(rows_of(p, 0), iota(103));
  EXPECT_LE(s.rows->largest_read.load(), 10);
}

TEST(PipelineStream, ShuffleIsAPermutationThatDependsOnSeedAndEpochOnly) {
  auto s = streamed(1000, 16);
  Pipeline a(s.data, spec(32, 50)), b(s.data, spec(32, 50));
  const auto first = rows_of(a, 0);
  // One epoch reads the file about once: its blocks, plus the buffer's first
  // examples when the epoch starts (read by row before their blocks are).
  EXPECT_LE(s.rows->rows_read.load(), 1000 + 50);
  EXPECT_EQ(first, rows_of(b, 0));  // another pipeline, the same order
  EXPECT_NE(first, rows_of(a, 1));  // another epoch, another order
  EXPECT_NE(first, iota(1000));
  auto sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(1000));
  EXPECT_EQ(rows_of(a, 0), first);  // back to epoch 0: the same again
  // The block order is shuffled over the whole file: the first 100 examples
  // come from blocks all over it, not from its first few.
  const int64_t late =
      std::count_if(first.begin(), first.begin() + 100, [](int64_t r) { return r >= 500; });
  EXPECT_GT(late, 10);
  // Memory: no read is larger than a block, and the file is read about once
  // per epoch (the buffer and one block, never the whole set).
  EXPECT_LE(s.rows->largest_read.load(), 16);
}

TEST(PipelineStream, SeekContinuesExactlyAsAnUninterruptedRun) {
  auto s = streamed(997, 13);
  for (const int64_t prefetch : {0, 2}) {
    PipelineSpec ps = spec(10, 64, prefetch);
    ps.repeat = 2;  // a seek into the second pass too
    Pipeline whole(s.data, ps), resumed(s.data, ps);
    const auto all = rows_of(whole, 3);
    ASSERT_EQ(all.size(), 997u * 2);
    for (const int64_t from : {1, 37, 99, 100, 150, 199}) {
      const auto rest = rows_of(resumed, 3, from);
      EXPECT_EQ(rest, std::vector<int64_t>(all.begin() + from * 10, all.end()))
          << "seek to batch " << from << ", prefetch " << prefetch;
    }
  }
}

TEST(PipelineStream, PrefetchGivesTheSameBatches) {
  auto s = streamed(500, 7);
  Pipeline plain(s.data, spec(16, 40)), ahead(s.data, spec(16, 40, 3));
  for (int64_t epoch = 0; epoch < 2; ++epoch)
    EXPECT_EQ(rows_of(plain, epoch), rows_of(ahead, epoch));
}

TEST(PipelineStream, TwoWorkersReadDisjointShardsThatCoverTheData) {
  auto s = streamed(1001, 10);
  for (const bool even : {false, true}) {
    std::vector<int64_t> both;
    std::vector<std::set<int64_t>> blocks(2);
    for (int64_t w = 0; w < 2; ++w) {
      PipelineSpec ps = spec(9, 30);
      ps.shard_count = 2;
      ps.shard_index = w;
      ps.shard_even = even;
      Pipeline p(s.data, ps);
      const auto rows = rows_of(p, 5);
      EXPECT_EQ(static_cast<int64_t>(rows.size()), even ? 500 : 501 - w);
      for (const int64_t r : rows) blocks[static_cast<size_t>(w)].insert(r / 10);
      both.insert(both.end(), rows.begin(), rows.end());
    }
    std::sort(both.begin(), both.end());
    EXPECT_TRUE(std::adjacent_find(both.begin(), both.end()) == both.end()) << "disjoint";
    if (!even) {
      EXPECT_EQ(both, iota(1001)) << "complete";
    }
    // Each worker reads its own blocks: at most the one at the border is shared.
    std::vector<int64_t> shared;
    std::set_intersection(blocks[0].begin(), blocks[0].end(), blocks[1].begin(), blocks[1].end(),
                          std::back_inserter(shared));
    EXPECT_LE(shared.size(), 1u);
  }
}

TEST(PipelineStream, SelectionKeepsOnlyItsExamples) {
  auto s = streamed(200, 8);
  PipelineSpec ps = spec(7, 20);
  ps.select = {SelectStep::skip(50), SelectStep::take(100)};
  Pipeline p(s.data, ps);
  auto rows = rows_of(p, 0);
  std::sort(rows.begin(), rows.end());
  std::vector<int64_t> want(100);
  for (int64_t i = 0; i < 100; ++i) want[static_cast<size_t>(i)] = 50 + i;
  EXPECT_EQ(rows, want);
}

TEST(PipelineStream, ShardRangesAreDisjointAndComplete) {
  for (const int64_t n : {0, 1, 7, 100, 101}) {
    int64_t next = 0;
    for (int64_t w = 0; w < 3; ++w) {
      const auto [begin, end] = shard_range(n, 3, w, false);
      EXPECT_EQ(begin, next);
      next = end;
    }
    EXPECT_EQ(next, n);
    EXPECT_EQ(shard_range(n, 3, 2, true).second - shard_range(n, 3, 2, true).first, n / 3);
  }
}

}  // namespace
}  // namespace drun::data

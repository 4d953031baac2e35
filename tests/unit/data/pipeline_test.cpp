// Pipeline: each example once per epoch, deterministic shuffles, shards,
// batching, take, repeat, map, prefetch equivalence and seek.
#include "data/pipeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>

#include "data/permutation.hpp"
#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;

// n examples: x[i] = (i, -i), y[i] = i, so a batch shows which examples it holds.
std::shared_ptr<const Dataset> counting(int64_t n) {
  auto d = std::make_shared<Dataset>();
  d->x = Tensor({n, 2});
  d->y = Tensor({n}, DType::i32);
  for (int64_t i = 0; i < n; ++i) {
    d->x.f32()[2 * i] = static_cast<float>(i);
    d->x.f32()[2 * i + 1] = static_cast<float>(-i);
    d->y.i32()[i] = static_cast<int32_t>(i);
  }
  return d;
}

struct Epoch {
  std::vector<int32_t> ids;    // y of every example, in order
  std::vector<int64_t> sizes;  // batch sizes
  std::vector<float> x;        // all x values, in order
};

Epoch run_epoch(Pipeline& p, int64_t epoch) {
  p.start_epoch(epoch);
  Epoch e;
  Batch b;
  while (p.next(b)) {
    EXPECT_EQ(b.x.dim(0), b.size);
    EXPECT_EQ(b.y.dim(0), b.size);
    e.sizes.push_back(b.size);
    for (int64_t i = 0; i < b.size; ++i) e.ids.push_back(b.y.i32()[i]);
    e.x.insert(e.x.end(), b.x.f32(), b.x.f32() + b.x.numel());
  }
  return e;
}

std::vector<int32_t> sorted(std::vector<int32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int32_t> iota(int32_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

PipelineSpec batched(int64_t size) {
  PipelineSpec s;
  s.batch_size = size;
  return s;
}

TEST(Pipeline, InOrderWithoutShuffle) {
  Pipeline p(counting(10), batched(4));
  EXPECT_EQ(p.batches_per_epoch(), 3);
  EXPECT_EQ(p.examples_per_epoch(), 10);
  Epoch e = run_epoch(p, 0);
  EXPECT_EQ(e.ids, iota(10));
  EXPECT_EQ(e.sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(e.x[2 * 7], 7.0f);
  EXPECT_EQ(e.x[2 * 7 + 1], -7.0f);
}

TEST(Pipeline, NextWithoutStartEpochRunsEpochZero) {
  Pipeline p(counting(3), batched(2));
  Batch b;
  ASSERT_TRUE(p.next(b));
  EXPECT_EQ(p.epoch(), 0);
  EXPECT_EQ(p.position(), 1);
  ASSERT_TRUE(p.next(b));
  EXPECT_EQ(b.size, 1);
  EXPECT_FALSE(p.next(b));
  EXPECT_FALSE(p.next(b));
  EXPECT_EQ(p.position(), 2);
}

TEST(Pipeline, ShuffleSeesEveryExampleOncePerEpoch) {
  PipelineSpec s = batched(7);
  s.shuffle = true;
  s.seed = 42;
  Pipeline p(counting(100), s);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    Epoch e = run_epoch(p, epoch);
    EXPECT_NE(e.ids, iota(100));
    EXPECT_EQ(sorted(e.ids), iota(100));
  }
}

TEST(Pipeline, ShuffleIsAFunctionOfSeedAndEpoch) {
  PipelineSpec s = batched(8);
  s.shuffle = true;
  s.seed = 7;
  Pipeline a(counting(50), s), b(counting(50), s);
  Epoch a0 = run_epoch(a, 0), a1 = run_epoch(a, 1);
  // b visits the epochs in another order and still agrees.
  Epoch b1 = run_epoch(b, 1), b0 = run_epoch(b, 0);
  EXPECT_EQ(a0.ids, b0.ids);
  EXPECT_EQ(a1.ids, b1.ids);
  EXPECT_NE(a0.ids, a1.ids);
  EXPECT_EQ(run_epoch(a, 0).ids, a0.ids);
  s.seed = 8;
  Pipeline c(counting(50), s);
  EXPECT_NE(run_epoch(c, 0).ids, a0.ids);
}

// Pins the permutation bit for bit: it must not change with the platform, the
// standard library or a refactoring, or resumed runs would see other batches.
TEST(Pipeline, PermutationIsPortable) {
  std::vector<int64_t> p;
  permutation(10, 42, 0, 0, p);
  EXPECT_EQ(p, (std::vector<int64_t>{9, 2, 4, 8, 5, 7, 1, 0, 6, 3}));
  std::mt19937_64 rng(5489);
  EXPECT_EQ(rng(), 14514284786278117030ULL);  // fixed by the C++ standard
}

TEST(Pipeline, ShardsAreDisjointAndCoverTheSet) {
  for (bool shuffle : {false, true}) {
    std::vector<int32_t> all;
    std::set<int32_t> seen;
    for (int64_t k = 0; k < 3; ++k) {
      PipelineSpec s = batched(5);
      s.shuffle = shuffle;
      s.seed = 3;
      s.shard_count = 3;
      s.shard_index = k;
      Pipeline p(counting(30), s);
      EXPECT_EQ(p.examples_per_epoch(), 10);
      Epoch e = run_epoch(p, 2);
      for (int32_t id : e.ids) EXPECT_TRUE(seen.insert(id).second) << "example " << id << " twice";
      all.insert(all.end(), e.ids.begin(), e.ids.end());
    }
    EXPECT_EQ(sorted(all), iota(30));
  }
}

TEST(Pipeline, UnevenShards) {
  // 10 examples over 3 workers: even shards give every worker 3 (one example
  // sits out the pass); uneven ones give 4, 3, 3 and cover everything.
  std::set<int32_t> even_seen, uneven_seen;
  for (int64_t k = 0; k < 3; ++k) {
    PipelineSpec s = batched(2);
    s.shuffle = true;
    s.shard_count = 3;
    s.shard_index = k;
    Pipeline even(counting(10), s);
    EXPECT_EQ(even.examples_per_epoch(), 3);
    for (int32_t id : run_epoch(even, 0).ids) EXPECT_TRUE(even_seen.insert(id).second);
    s.shard_even = false;
    Pipeline uneven(counting(10), s);
    EXPECT_EQ(uneven.examples_per_epoch(), k == 0 ? 4 : 3);
    for (int32_t id : run_epoch(uneven, 0).ids) EXPECT_TRUE(uneven_seen.insert(id).second);
  }
  EXPECT_EQ(even_seen.size(), 9u);
  EXPECT_EQ(uneven_seen.size(), 10u);
}

TEST(Pipeline, ShardWithoutShuffleIsStrided) {
  PipelineSpec s = batched(10);
  s.shard_count = 4;
  s.shard_index = 1;
  s.shard_even = false;
  Pipeline p(counting(10), s);
  EXPECT_EQ(run_epoch(p, 0).ids, (std::vector<int32_t>{1, 5, 9}));
}

TEST(Pipeline, DropRemainder) {
  PipelineSpec s = batched(4);
  s.drop_remainder = true;
  Pipeline p(counting(10), s);
  EXPECT_EQ(p.batches_per_epoch(), 2);
  EXPECT_EQ(p.examples_per_epoch(), 8);
  Epoch e = run_epoch(p, 0);
  EXPECT_EQ(e.sizes, (std::vector<int64_t>{4, 4}));
}

TEST(Pipeline, TakeExamplesIsAFixedSubset) {
  PipelineSpec s = batched(3);
  s.select = {SelectStep::take(5)};
  s.shuffle = true;
  Pipeline p(counting(100), s);
  EXPECT_EQ(p.examples_per_epoch(), 5);
  for (int64_t epoch = 0; epoch < 3; ++epoch) EXPECT_EQ(sorted(run_epoch(p, epoch).ids), iota(5));
  s.select = {SelectStep::take(1000)};  // more than there are
  Pipeline all(counting(10), s);
  EXPECT_EQ(all.examples_per_epoch(), 10);
}

// The ids of epoch 0 of `s` over counting(n).
std::vector<int32_t> first_epoch(int64_t n, const PipelineSpec& s) {
  Pipeline p(counting(n), s);
  return run_epoch(p, 0).ids;
}

TEST(Pipeline, SkipThenTakeReadsTheExamplesBetween) {
  PipelineSpec s = batched(4);
  s.select = {SelectStep::skip(10), SelectStep::take(5)};
  EXPECT_EQ(first_epoch(100, s), (std::vector<int32_t>{10, 11, 12, 13, 14}));
  s.select = {SelectStep::take(5), SelectStep::skip(10)};
  Pipeline none(counting(100), s);
  EXPECT_EQ(none.examples_per_epoch(), 0);
  EXPECT_TRUE(run_epoch(none, 0).ids.empty());
}

TEST(Pipeline, SkipIsAFixedSubsetThatShuffleReorders) {
  PipelineSpec s = batched(7);
  s.select = {SelectStep::skip(90)};
  s.shuffle = true;
  Pipeline p(counting(100), s);
  std::vector<int32_t> expected(10);
  std::iota(expected.begin(), expected.end(), 90);
  for (int64_t epoch = 0; epoch < 3; ++epoch) EXPECT_EQ(sorted(run_epoch(p, epoch).ids), expected);
}

// The two parts of a split: disjoint, together every example, sized by the
// fraction, the same on every construction and in every epoch.
TEST(Pipeline, SplitPartsAreDisjointAndCoverTheData) {
  for (const std::optional<uint64_t> seed :
       {std::optional<uint64_t>{}, std::optional<uint64_t>{7}}) {
    PipelineSpec first = batched(16), rest = batched(16);
    first.select = {SelectStep::split(0.8, true, seed)};
    rest.select = {SelectStep::split(0.8, false, seed)};
    first.shuffle = rest.shuffle = true;
    Pipeline a(counting(150), first), b(counting(150), rest);
    EXPECT_EQ(a.examples_per_epoch(), 120);
    EXPECT_EQ(b.examples_per_epoch(), 30);
    std::vector<int32_t> both = run_epoch(a, 0).ids;
    const std::vector<int32_t> tail = run_epoch(b, 0).ids;
    both.insert(both.end(), tail.begin(), tail.end());
    EXPECT_EQ(sorted(both), iota(150));
    EXPECT_EQ(sorted(run_epoch(a, 1).ids), sorted(run_epoch(a, 0).ids));
    Pipeline again(counting(150), first);
    EXPECT_EQ(sorted(run_epoch(again, 0).ids), sorted(run_epoch(a, 0).ids));
  }
}

TEST(Pipeline, SplitWithoutSeedFollowsTheDataOrderWithSeedDraws) {
  PipelineSpec s = batched(10);
  s.select = {SelectStep::split(0.5, true)};
  EXPECT_EQ(first_epoch(10, s), iota(5));
  // Sorted data (here the ids) gives a seeded first half from both ends.
  s.select = {SelectStep::split(0.5, true, 1)};
  const std::vector<int32_t> drawn = sorted(first_epoch(100, s));
  ASSERT_EQ(drawn.size(), 50u);
  EXPECT_LT(drawn.front(), 50);
  EXPECT_GE(drawn.back(), 50);
  // Another seed, another draw.
  s.select = {SelectStep::split(0.5, true, 2)};
  EXPECT_NE(sorted(first_epoch(100, s)), drawn);
}

TEST(Pipeline, SplitPointRoundsToNearest) {
  EXPECT_EQ(split_point(0.8, 150), 120);
  EXPECT_EQ(split_point(0.5, 5), 3);
  EXPECT_EQ(split_point(0.01, 10), 0);
  EXPECT_EQ(split_point(0.99, 10), 10);
}

TEST(Pipeline, SkipBatches) {
  PipelineSpec s = batched(4);
  s.skip_batches = 2;
  s.take_batches = 1;
  Pipeline p(counting(10), s);
  EXPECT_EQ(p.batches_per_epoch(), 1);
  EXPECT_EQ(p.examples_per_epoch(), 2);
  EXPECT_EQ(run_epoch(p, 0).ids, (std::vector<int32_t>{8, 9}));
  s.skip_batches = 5;
  Pipeline none(counting(10), s);
  EXPECT_EQ(none.batches_per_epoch(), 0);
  EXPECT_EQ(none.examples_per_epoch(), 0);
}

TEST(Pipeline, TakeBatches) {
  PipelineSpec s = batched(4);
  s.take_batches = 2;
  Pipeline p(counting(100), s);
  EXPECT_EQ(p.batches_per_epoch(), 2);
  EXPECT_EQ(p.examples_per_epoch(), 8);
  EXPECT_EQ(run_epoch(p, 0).ids, iota(8));
  s.take_batches = 0;
  Pipeline none(counting(10), s);
  EXPECT_TRUE(run_epoch(none, 0).ids.empty());
}

TEST(Pipeline, RepeatMakesPassesThatBatchesSpan) {
  PipelineSpec s = batched(4);
  s.repeat = 2;
  Pipeline p(counting(5), s);
  EXPECT_EQ(p.batches_per_epoch(), 3);
  EXPECT_EQ(p.examples_per_epoch(), 10);
  Epoch e = run_epoch(p, 0);
  EXPECT_EQ(e.ids, (std::vector<int32_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
  EXPECT_EQ(e.sizes, (std::vector<int64_t>{4, 4, 2}));

  s.shuffle = true;
  Pipeline q(counting(20), s);
  Epoch f = run_epoch(q, 0);
  std::vector<int32_t> first(f.ids.begin(), f.ids.begin() + 20),
      second(f.ids.begin() + 20, f.ids.end());
  EXPECT_EQ(sorted(first), iota(20));
  EXPECT_EQ(sorted(second), iota(20));
  EXPECT_NE(first, second);  // each pass has its own permutation
}

TEST(Pipeline, ScaleAndOffset) {
  PipelineSpec s = batched(10);
  s.scale = 0.5f;
  s.offset = 1.0f;
  Pipeline p(counting(4), s);
  Epoch e = run_epoch(p, 0);
  EXPECT_EQ(e.x, (std::vector<float>{1.0f, 1.0f, 1.5f, 0.5f, 2.0f, 0.0f, 2.5f, -0.5f}));
  EXPECT_EQ(e.ids, iota(4));  // labels are not scaled
}

TEST(Pipeline, FloatTargetsAndImageShapes) {
  auto d = std::make_shared<Dataset>();
  d->x = Tensor({6, 2, 2, 1});
  d->y = Tensor({6, 3});
  for (int64_t i = 0; i < 24; ++i) d->x.f32()[i] = static_cast<float>(i / 4);
  for (int64_t i = 0; i < 18; ++i) d->y.f32()[i] = static_cast<float>(i / 3) * 10 + i % 3;
  PipelineSpec s = batched(4);
  s.shuffle = true;
  Pipeline p(d, s);
  Batch b;
  p.start_epoch(0);
  while (p.next(b)) {
    EXPECT_EQ(b.x.shape(), Shape({b.size, 2, 2, 1}));
    EXPECT_EQ(b.y.shape(), Shape({b.size, 3}));
    for (int64_t k = 0; k < b.size; ++k) {
      float id = b.x.f32()[4 * k];
      for (int j = 0; j < 4; ++j) EXPECT_EQ(b.x.f32()[4 * k + j], id);
      for (int j = 0; j < 3; ++j) EXPECT_EQ(b.y.f32()[3 * k + j], id * 10 + j);
    }
  }
}

// Pixels kept as bytes give the batches their float32 copy gives: plain,
// scaled and offset, and augmented (crop, flip, standardisation).
TEST(Pipeline, ByteImagesBatchAsTheirFloatCopy) {
  auto bytes = std::make_shared<Dataset>(), floats = std::make_shared<Dataset>();
  const int64_t n = 7, pixels = 4 * 4 * 3;
  bytes->x = Tensor({n, 4, 4, 3}, DType::u8);
  floats->x = Tensor({n, 4, 4, 3});
  bytes->y = floats->y = Tensor({n}, DType::i32);
  for (int64_t i = 0; i < n * pixels; ++i) {
    bytes->x.u8()[i] = static_cast<uint8_t>((i * 37) % 256);
    floats->x.f32()[i] = static_cast<float>((i * 37) % 256);
  }
  for (int64_t i = 0; i < n; ++i) bytes->y.i32()[i] = static_cast<int32_t>(i);
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind);
    PipelineSpec s = batched(3);
    s.shuffle = true;
    if (kind >= 1) s.scale = 1.0f / 255;
    if (kind == 1) s.offset = -0.5f;
    if (kind == 2) {
      s.crop_padding = 1;
      s.flip = true;
      s.standardize = true;
    }
    Pipeline from_bytes(bytes, s), from_floats(floats, s);
    for (int64_t epoch : {0, 1}) {
      const Epoch a = run_epoch(from_bytes, epoch), b = run_epoch(from_floats, epoch);
      EXPECT_EQ(a.ids, b.ids);
      EXPECT_EQ(a.x, b.x);
      EXPECT_EQ(a.x.size(), static_cast<size_t>(n * pixels));
    }
  }
}

TEST(Pipeline, ReusesBatchStorage) {
  Pipeline p(counting(100), batched(10));
  Batch b;
  p.start_epoch(0);
  ASSERT_TRUE(p.next(b));
  const void* x = b.x.raw();
  const void* y = b.y.raw();
  while (p.next(b)) {
    EXPECT_EQ(b.x.raw(), x);
    EXPECT_EQ(b.y.raw(), y);
  }
}

PipelineSpec busy_spec(int64_t prefetch) {
  PipelineSpec s = batched(6);
  s.shuffle = true;
  s.seed = 11;
  s.repeat = 2;
  s.scale = 1.0f / 255;
  s.shard_count = 2;
  s.shard_index = 1;
  s.prefetch = prefetch;
  return s;
}

TEST(Pipeline, PrefetchGivesIdenticalBatches) {
  Pipeline plain(counting(101), busy_spec(0));
  for (int64_t depth : {1, 2, 5}) {
    Pipeline fetched(counting(101), busy_spec(depth));
    for (int64_t epoch : {0, 1, 3}) {
      Epoch a = run_epoch(plain, epoch), b = run_epoch(fetched, epoch);
      EXPECT_EQ(a.ids, b.ids);
      EXPECT_EQ(a.sizes, b.sizes);
      ASSERT_EQ(a.x.size(), b.x.size());
      EXPECT_EQ(0, std::memcmp(a.x.data(), b.x.data(), a.x.size() * sizeof(float)));
    }
  }
}

TEST(Pipeline, SeekReproducesTheRemainingBatches) {
  for (int64_t prefetch : {0, 3}) {
    Pipeline full(counting(50), busy_spec(prefetch));
    Epoch e = run_epoch(full, 4);
    const int64_t per_batch = 6;
    for (int64_t at : {int64_t{0}, int64_t{2}, full.batches_per_epoch()}) {
      Pipeline resumed(counting(50), busy_spec(prefetch));
      resumed.start_epoch(1);  // somewhere else first
      Batch b;
      resumed.next(b);
      resumed.seek(4, at);
      EXPECT_EQ(resumed.position(), at);
      std::vector<int32_t> rest;
      while (resumed.next(b))
        for (int64_t i = 0; i < b.size; ++i) rest.push_back(b.y.i32()[i]);
      std::vector<int32_t> want(e.ids.begin() + std::min<int64_t>(at * per_batch, e.ids.size()),
                                e.ids.end());
      EXPECT_EQ(rest, want) << "seek to " << at << " with prefetch " << prefetch;
      EXPECT_EQ(resumed.position(), resumed.batches_per_epoch());
    }
  }
}

TEST(Pipeline, SeekWithinTheSameEpoch) {
  Pipeline p(counting(40), busy_spec(2));
  Epoch e = run_epoch(p, 0);
  p.seek(0, 1);
  Batch b;
  ASSERT_TRUE(p.next(b));
  EXPECT_EQ(b.y.i32()[0], e.ids[6]);
}

TEST(Pipeline, StopsMidEpoch) {
  // Destroying a pipeline whose thread waits on a full ring must not hang (a
  // hang ends in the suite's timeout); what it gave before is the epoch's start.
  Pipeline plain(counting(1000), busy_spec(0));
  const Epoch whole = run_epoch(plain, 0);
  ASSERT_GT(whole.sizes.size(), 2u);
  for (int i = 0; i < 20; ++i) {
    auto p = std::make_unique<Pipeline>(counting(1000), busy_spec(2));
    Batch b;
    p->start_epoch(0);
    ASSERT_TRUE(p->next(b));  // the first batch of the epoch, as without prefetch
    ASSERT_EQ(b.size, whole.sizes[0]);
    EXPECT_EQ(b.y.i32()[0], whole.ids[0]);
    p.reset();  // the producer still has batches to give
  }
}

TEST(Pipeline, RejectsBadSpecsAndData) {
  PipelineSpec s;
  s.batch_size = 0;
  EXPECT_TRUE(contains(usage_error([&] { Pipeline(counting(4), s); }), "batch size"));
  s = {};
  s.shard_count = 2;
  s.shard_index = 2;
  EXPECT_TRUE(contains(usage_error([&] { Pipeline(counting(4), s); }), "shard index 2"));
  auto bad = std::make_shared<Dataset>();
  bad->x = Tensor({4, 2});
  bad->y = Tensor({3}, DType::i32);
  EXPECT_TRUE(contains(usage_error([&] { Pipeline(bad, PipelineSpec{}); }), "y has 3"));
  Pipeline p(counting(4), batched(2));
  EXPECT_TRUE(contains(usage_error([&] { p.seek(0, 3); }), "outside"));
}

TEST(Prefetcher, RethrowsTheProducersException) {
  Prefetcher f(2);
  f.start(0, 10, [](int64_t i, Batch& b) {
    if (i == 3) throw std::runtime_error("bad batch 3");
    b.x.ensure({1});
    b.y.ensure({1}, DType::i32);
    b.x.f32()[0] = static_cast<float>(i);
    b.size = 1;
  });
  Batch b;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(f.next(b));
    EXPECT_EQ(b.x.f32()[0], static_cast<float>(i));
  }
  EXPECT_THROW(f.next(b), std::runtime_error);
  f.stop();
}

// next() hands over the slot's tensors instead of copying them: depth + 1
// batches' storage circulates (nothing allocated once warm), and the batch the
// caller holds stays as it was while the producer runs ahead.
TEST(Prefetcher, BatchesStayIntactWhileHeldAndNothingIsAllocatedOnceWarm) {
  constexpr int64_t kDepth = 2, kBatches = 40;
  Prefetcher f(kDepth);
  f.start(0, kBatches, [](int64_t i, Batch& b) {
    b.x.ensure({256});
    b.y.ensure({1}, DType::i32);
    for (int64_t j = 0; j < 256; ++j) b.x.f32()[j] = static_cast<float>(i * 1000 + j);
    b.y.i32()[0] = static_cast<int32_t>(i);
    b.size = 1;
  });
  Batch b;
  std::set<const void*> storages;
  for (int64_t i = 0; i < kBatches; ++i) {
    ASSERT_TRUE(f.next(b));
    storages.insert(b.x.raw());
    // The producer fills the ring meanwhile; none of it may land in b.
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    EXPECT_EQ(b.y.i32()[0], i);
    for (int64_t j = 0; j < 256; j += 51)
      ASSERT_EQ(b.x.f32()[j], static_cast<float>(i * 1000 + j)) << "batch " << i;
  }
  EXPECT_FALSE(f.next(b));
  EXPECT_LE(storages.size(), static_cast<size_t>(kDepth + 1));
}

TEST(Prefetcher, EmptyRangeAndRestart) {
  Prefetcher f(3);
  Batch b;
  EXPECT_FALSE(f.next(b));
  auto make = [](int64_t i, Batch& out) {
    out.x.ensure({1});
    out.y.ensure({1}, DType::i32);
    out.y.i32()[0] = static_cast<int32_t>(i);
    out.size = 1;
  };
  f.start(5, 5, make);
  EXPECT_FALSE(f.next(b));
  f.start(2, 4, make);
  ASSERT_TRUE(f.next(b));
  EXPECT_EQ(b.y.i32()[0], 2);
  ASSERT_TRUE(f.next(b));
  EXPECT_EQ(b.y.i32()[0], 3);
  EXPECT_FALSE(f.next(b));
}

}  // namespace
}  // namespace drun::data

// A pipeline over a data set whose examples a source makes per batch (as image
// folders do): the same batches on any thread count, draws that follow the
// epoch and the example rather than the example's place, scale applied after.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "base/options.hpp"
#include "data/pipeline.hpp"

namespace drun::data {
namespace {

// Example i is (i, draw's low bits) in a (1, 2) shape.
class FakeSource final : public ExampleSource {
 public:
  FakeSource(int64_t n, int threads) : n_(n), threads_(threads) {}
  int64_t size() const override { return n_; }
  Shape example_shape() const override { return Shape{1, 2}; }
  int threads() const override { return threads_; }
  void make(int64_t index, uint64_t draw, float* dst) const override {
    if (index == bad_) throw UsageError("example " + std::to_string(index) + " is bad");
    dst[0] = static_cast<float>(index);
    dst[1] = static_cast<float>(draw % 1000003);
  }
  int64_t bad_ = -1;

 private:
  int64_t n_;
  int threads_;
};

std::shared_ptr<const Dataset> dataset(int64_t n, int threads, int64_t bad = -1) {
  auto source = std::make_shared<FakeSource>(n, threads);
  source->bad_ = bad;
  auto d = std::make_shared<Dataset>();
  d->y = Tensor(Shape{n}, DType::i32);
  for (int64_t i = 0; i < n; ++i) d->y.i32()[i] = static_cast<int32_t>(i % 3);
  d->source = source;
  return d;
}

std::vector<float> epoch_x(Pipeline& p, int64_t epoch) {
  std::vector<float> all;
  Batch b;
  p.start_epoch(epoch);
  while (p.next(b)) all.insert(all.end(), b.x.f32(), b.x.f32() + b.x.numel());
  return all;
}

nlohmann::json ops(bool shuffle, int64_t batch, int64_t prefetch = 0) {
  nlohmann::json o = nlohmann::json::array();
  if (shuffle) o.push_back({{"op", "shuffle"}, {"seed", 4}});
  o.push_back({{"op", "batch"}, {"size", batch}});
  if (prefetch) o.push_back({{"op", "prefetch"}, {"depth", prefetch}});
  return o;
}

TEST(PipelineSource, BatchesDoNotDependOnThreadsOrPrefetch) {
  Pipeline one(dataset(23, 1), parse_pipeline_ops(ops(true, 5)));
  Pipeline four(dataset(23, 4), parse_pipeline_ops(ops(true, 5, 2)));
  EXPECT_EQ(epoch_x(one, 2), epoch_x(four, 2));
  EXPECT_EQ(one.dataset().example_shape(), (Shape{1, 2}));
}

TEST(PipelineSource, DrawsFollowEpochAndExampleNotPlace) {
  Pipeline plain(dataset(12, 2), parse_pipeline_ops(ops(false, 4)));
  Pipeline shuffled(dataset(12, 2), parse_pipeline_ops(ops(true, 5)));
  const auto a = epoch_x(plain, 1), b = epoch_x(shuffled, 1), c = epoch_x(plain, 2);
  std::map<float, float> by_example;
  for (size_t i = 0; i < a.size(); i += 2) by_example[a[i]] = a[i + 1];
  for (size_t i = 0; i < b.size(); i += 2) EXPECT_EQ(by_example[b[i]], b[i + 1]) << b[i];
  int same = 0;
  for (size_t i = 0; i < a.size(); i += 2) same += a[i + 1] == c[i + 1];
  EXPECT_LT(same, 2) << "draws of epochs 1 and 2 should differ";
}

TEST(PipelineSource, ScaleAppliesAndLabelsFollow) {
  auto spec = parse_pipeline_ops(
      nlohmann::json::array({{{"op", "scale"}, {"factor", 0.5}}, {{"op", "batch"}, {"size", 3}}}));
  Pipeline p(dataset(6, 2), spec);
  Batch b;
  ASSERT_TRUE(p.next(b));
  EXPECT_EQ(b.x.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(b.x.f32()[2], 0.5f);  // example 1's index, halved
  EXPECT_EQ(b.y.i32()[2], 2);
}

TEST(PipelineSource, RefusesAugmentAndPassesErrorsOn) {
  const auto augment =
      nlohmann::json::array({{{"op", "augment"}, {"flip", true}}, {{"op", "batch"}, {"size", 2}}});
  EXPECT_THROW(Pipeline(dataset(4, 1), parse_pipeline_ops(augment)), UsageError);
  Pipeline p(dataset(8, 3, 5), parse_pipeline_ops(ops(false, 4, 2)));
  Batch b;
  EXPECT_TRUE(p.next(b));
  EXPECT_THROW(p.next(b), UsageError);
}

}  // namespace
}  // namespace drun::data

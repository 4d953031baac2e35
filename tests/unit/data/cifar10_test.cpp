// The CIFAR-10 binary reader on files in the real format written here, its
// errors, the sharded loading, and the augmentation ops of the pipeline.
#include "data/cifar10.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "data/augment.hpp"
#include "data/pipeline.hpp"
#include "data_test_util.hpp"
#include "usage_error.hpp"

namespace drun::data {
namespace {

using drun::testing::expect_usage_error;
using testing::Bytes;
using testing::TempDir;
using testing::write_raw;

// Record i: label i % 10; channel c of pixel p holds (i + 7 * c + p) % 256.
Bytes records(int first, int count) {
  Bytes b;
  for (int i = first; i < first + count; ++i) {
    b.push_back(static_cast<unsigned char>(i % 10));
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 1024; ++p) b.push_back(static_cast<unsigned char>((i + 7 * c + p) % 256));
  }
  return b;
}

// 5 training files of `per_file` records and a test file of 4.
void write_cifar(const TempDir& dir, int per_file) {
  for (int f = 0; f < 5; ++f)
    write_raw(dir.file("data_batch_" + std::to_string(f + 1) + ".bin"),
              records(f * per_file, per_file));
  write_raw(dir.file("test_batch.bin"), records(0, 4));
}

TEST(Cifar10, ReadsPlanesIntoChannelsLast) {
  TempDir dir;
  write_cifar(dir, 3);
  const Dataset train = load_cifar10("train", dir.file(""));
  ASSERT_EQ(train.x.shape().str(), "(15, 32, 32, 3)");
  EXPECT_FALSE(train.sharded);
  for (int i : {0, 4, 14}) {
    EXPECT_EQ(train.y.i32()[i], i % 10);
    for (int p : {0, 33, 1023})
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(train.x.u8()[(i * 1024 + p) * 3 + c], (i + 7 * c + p) % 256)
            << "record " << i << " pixel " << p << " channel " << c;
  }
  EXPECT_EQ(load_cifar10("test", dir.file("")).size(), 4);
}

TEST(Cifar10, ShardsReadOnlyTheirContiguousPart) {
  TempDir dir;
  write_cifar(dir, 3);  // 15 records: shards of 7, the last record left out
  const Dataset a = load_cifar10("train", dir.file(""), 2, 0);
  const Dataset b = load_cifar10("train", dir.file(""), 2, 1);
  ASSERT_EQ(a.size(), 7);
  ASSERT_EQ(b.size(), 7);
  EXPECT_TRUE(a.sharded);
  EXPECT_EQ(a.y.i32()[0], 0);
  EXPECT_EQ(b.y.i32()[0], 7);  // record 7 sits in the third file: reads cross files
  EXPECT_EQ(b.x.u8()[0], 7);
  EXPECT_EQ(b.y.i32()[6], 13 % 10);
}

TEST(Cifar10, BadFilesNameTheFileAndWhatIsWrong) {
  TempDir dir;
  expect_usage_error([&] { load_cifar10("train", dir.file("")); },
                     {"data_batch_1.bin", "not found", "cifar-10-binary.tar.gz", "--data-dir"});
  write_cifar(dir, 2);
  Bytes cut = records(0, 2);
  cut.resize(cut.size() - 100);
  write_raw(dir.file("data_batch_3.bin"), cut);
  expect_usage_error([&] { load_cifar10("train", dir.file("")); },
                     {"data_batch_3.bin", "not a whole number of 3,073-byte records"});
  write_cifar(dir, 2);
  Bytes bad = records(0, 2);
  bad[3073] = 12;  // the second record's label
  write_raw(dir.file("data_batch_5.bin"), bad);
  expect_usage_error([&] { load_cifar10("train", dir.file("")); },
                     {"data_batch_5.bin", "record 1", "label 12"});
  expect_usage_error([&] { load_cifar10("validation", dir.file("")); }, {"unknown split"});
}

TEST(Cifar10, FindsTheArchiveFolder) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("cifar-10-batches-bin"));
  write_raw(dir.file("cifar-10-batches-bin/test_batch.bin"), records(0, 2));
  EXPECT_EQ(load_cifar10("test", dir.file("")).size(), 2);
}

// One image of 4x4x1 with distinct values, through augment_example.
TEST(Augment, CropFlipAndStandardize) {
  float src[16];
  for (int i = 0; i < 16; ++i) src[i] = static_cast<float>(i + 1);
  PipelineSpec spec;
  spec.crop_padding = 2;
  float a[16], b[16];
  bool moved = false;
  for (int pos = 0; pos < 20; ++pos) {
    augment_example(spec, 4, 4, 1, src, a, 3, pos);
    augment_example(spec, 4, 4, 1, src, b, 3, pos);
    for (int i = 0; i < 16; ++i) ASSERT_EQ(a[i], b[i]);  // same (seed, epoch, position)
    // A crop is the image shifted by (dy, dx) with zeros coming in.
    int dy = 99, dx = 99;
    for (int y = 0; y < 4 && dy == 99; ++y)
      for (int x = 0; x < 4; ++x)
        if (a[y * 4 + x] != 0) {
          const int v = static_cast<int>(a[y * 4 + x]) - 1;
          dy = v / 4 - y;
          dx = v % 4 - x;
          break;
        }
    if (dy == 99) continue;  // shifted out entirely is impossible with pad 2 < 4
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        const int sy = y + dy, sx = x + dx;
        const float want = sy >= 0 && sy < 4 && sx >= 0 && sx < 4 ? src[sy * 4 + sx] : 0.f;
        ASSERT_EQ(a[y * 4 + x], want) << "pos " << pos;
      }
    moved = moved || dy != 0 || dx != 0;
  }
  EXPECT_TRUE(moved);

  PipelineSpec flip;
  flip.flip = true;
  int flipped = 0;
  for (int pos = 0; pos < 40; ++pos) {
    augment_example(flip, 4, 4, 1, src, a, 0, pos);
    if (a[0] == src[3]) {
      ++flipped;
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) ASSERT_EQ(a[y * 4 + x], src[y * 4 + 3 - x]);
    } else {
      for (int i = 0; i < 16; ++i) ASSERT_EQ(a[i], src[i]);
    }
  }
  EXPECT_GT(flipped, 5);
  EXPECT_LT(flipped, 35);

  PipelineSpec standard;
  standard.standardize = true;
  augment_example(standard, 4, 4, 1, src, a, 0, 0);
  double sum = 0, sq = 0;
  for (float v : a) {
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  EXPECT_NEAR(sum / 16, 0.0, 1e-6);
  EXPECT_NEAR(sq / 16, 1.0, 1e-5);
}

TEST(Augment, PipelineRepeatsItsImagesAfterASeek) {
  TempDir dir;
  write_cifar(dir, 2);
  auto ds = std::make_shared<const Dataset>(load_cifar10("train", dir.file("")));
  PipelineSpec spec;
  spec.batch_size = 3;
  spec.crop_padding = 4;
  spec.flip = true;
  spec.standardize = true;
  spec.augment_seed = 5;
  Pipeline p(ds, spec), q(ds, spec);
  Batch a, b;
  p.start_epoch(2);
  p.next(a);
  p.next(a);  // the second batch of epoch 2
  q.seek(2, 1);
  q.next(b);
  ASSERT_EQ(a.x.numel(), b.x.numel());
  for (int64_t i = 0; i < a.x.numel(); ++i) ASSERT_EQ(a.x.f32()[i], b.x.f32()[i]);
  // Another epoch draws other crops.
  q.seek(3, 1);
  q.next(b);
  bool differs = false;
  for (int64_t i = 0; i < a.x.numel(); ++i) differs = differs || a.x.f32()[i] != b.x.f32()[i];
  EXPECT_TRUE(differs);
}

TEST(Augment, RefusesNonImages) {
  auto ds = std::make_shared<Dataset>();
  ds->x = Tensor(Shape{4, 3});
  ds->y = Tensor(Shape{4}, DType::i32);
  ds->x.zero();
  ds->y.zero();
  PipelineSpec spec;
  spec.flip = true;
  expect_usage_error([&] { Pipeline p(ds, spec); }, {"augment", "(H, W, C)"});
}

}  // namespace
}  // namespace drun::data

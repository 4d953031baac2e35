// Fashion-MNIST loader: small fake files for the error paths, and the real
// train and test splits from Debian's dataset-fashion-mnist when installed.
#include "data/fashion_mnist.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <filesystem>

#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;

// A fake split of n 2x2 images whose pixels are the example index and labels i % 10.
void write_split(const TempDir& dir, const std::string& prefix, uint32_t images, uint32_t labels,
                 bool gz = true) {
  Bytes px, lb;
  for (uint32_t i = 0; i < images; ++i)
    for (int p = 0; p < 4; ++p) px.push_back(static_cast<unsigned char>(i));
  for (uint32_t i = 0; i < labels; ++i) lb.push_back(static_cast<unsigned char>(i % 10));
  auto write = gz ? write_gz : write_raw;
  std::string ext = gz ? ".gz" : "";
  write(dir.file(prefix + "-images-idx3-ubyte" + ext), idx_u8({images, 2, 2}, px));
  write(dir.file(prefix + "-labels-idx1-ubyte" + ext), idx_u8({labels}, lb));
}

TEST(FashionMnist, LoadsSplitsFromAFolder) {
  TempDir dir;
  write_split(dir, "train", 12, 12);
  write_split(dir, "t10k", 3, 3, /*gz=*/false);
  Dataset train = load_fashion_mnist("train", dir.file(""));
  ASSERT_EQ(train.size(), 12);
  EXPECT_EQ(train.x.shape(), Shape({12, 2, 2, 1}));
  EXPECT_EQ(train.y.shape(), Shape({12}));
  EXPECT_EQ(train.x.u8()[4 * 11], 11);
  EXPECT_EQ(train.y.i32()[11], 1);
  Dataset test = load_fashion_mnist("test", dir.file(""));
  EXPECT_EQ(test.size(), 3);
}

TEST(FashionMnist, CountMismatch) {
  TempDir dir;
  write_split(dir, "train", 12, 11);
  std::string msg = usage_error([&] { load_fashion_mnist("train", dir.file("")); });
  EXPECT_TRUE(contains(msg, "12 images"));
  EXPECT_TRUE(contains(msg, "11 labels"));
}

TEST(FashionMnist, LabelOutOfRange) {
  TempDir dir;
  write_split(dir, "train", 2, 2);
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_u8({2}, {3, 10}));
  EXPECT_TRUE(contains(usage_error([&] { load_fashion_mnist("train", dir.file("")); }),
                       "label 10 of example 1 is outside 0..9"));
}

TEST(FashionMnist, MissingFileNamesThePackage) {
  TempDir dir;
  std::string msg = usage_error([&] { load_fashion_mnist("test", dir.file("")); });
  EXPECT_TRUE(contains(msg, dir.file("t10k-images-idx3-ubyte.gz")));
  EXPECT_TRUE(contains(msg, "dataset-fashion-mnist"));
  EXPECT_TRUE(contains(msg, "DRUN_DATA_DIR"));
  EXPECT_TRUE(contains(msg, "--data-dir"));
}

TEST(FashionMnist, UnknownSplit) {
  std::string msg = usage_error([&] { load_fashion_mnist("validation", "/nonexistent"); });
  EXPECT_TRUE(contains(msg, "'validation'"));
  EXPECT_TRUE(contains(msg, "train, test"));
}

TEST(FashionMnist, DirectoryChoice) {
  EXPECT_EQ(fashion_mnist_dir("/some/where"), "/some/where");
  const char* old = std::getenv("DRUN_DATA_DIR");
  std::string saved = old ? old : "";
  setenv("DRUN_DATA_DIR", "/from/env", 1);
  EXPECT_EQ(fashion_mnist_dir(), "/from/env");
  EXPECT_EQ(fashion_mnist_dir("/given"), "/given");
  unsetenv("DRUN_DATA_DIR");
  EXPECT_EQ(fashion_mnist_dir(), kFashionMnistDir);
  if (old) setenv("DRUN_DATA_DIR", saved.c_str(), 1);
}

void expect_real_split(const std::string& split, int64_t n) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dataset d = load_fashion_mnist(split, kFashionMnistDir);
  ASSERT_EQ(d.x.shape(), Shape({n, 28, 28, 1}));
  ASSERT_EQ(d.y.shape(), Shape({n}));
  std::array<int64_t, 10> per_class{};
  for (int64_t i = 0; i < n; ++i) {
    int32_t c = d.y.i32()[i];
    ASSERT_GE(c, 0);
    ASSERT_LT(c, 10);
    ++per_class[static_cast<size_t>(c)];
  }
  for (int64_t count : per_class) EXPECT_EQ(count, n / 10);
  ASSERT_EQ(d.x.dtype(), DType::u8);
  const auto [lo, hi] = std::minmax_element(d.x.u8(), d.x.u8() + d.x.numel());
  EXPECT_EQ(*lo, 0);
  EXPECT_EQ(*hi, 255);
}

TEST(FashionMnist, RealTrainSplit) {
  expect_real_split("train", 60000);
}
TEST(FashionMnist, RealTestSplit) {
  expect_real_split("test", 10000);
}

}  // namespace
}  // namespace drun::data

// idx reader: raw and gzipped files, every element type, and each kind of bad file.
#include "data/idx.hpp"

#include <gtest/gtest.h>

#include "data/byte_reader.hpp"
#include "data/idx_pair.hpp"
#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;

// Two 2x3 images with pixels 0..11 (plus 250 to see values above 127 survive).
Bytes two_images() {
  return idx_u8({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 250});
}

void expect_two_images(const Tensor& t) {
  ASSERT_EQ(t.shape(), Shape({2, 2, 3, 1}));
  ASSERT_EQ(t.dtype(), DType::u8);  // bytes stay bytes
  for (int i = 0; i < 11; ++i) EXPECT_EQ(t.u8()[i], i);
  EXPECT_EQ(t.u8()[11], 250);
}

TEST(Idx, ReadsRawImages) {
  TempDir dir;
  write_raw(dir.file("img"), two_images());
  expect_two_images(read_idx_images(dir.file("img")));
}

TEST(Idx, ReadsGzippedImages) {
  TempDir dir;
  write_gz(dir.file("img.gz"), two_images());
  expect_two_images(read_idx_images(dir.file("img.gz")));
  EXPECT_TRUE(ByteReader(dir.file("img.gz")).compressed());
}

TEST(Idx, DetectsGzipByMagicNotByName) {
  TempDir dir;
  write_gz(dir.file("looks-raw"), two_images());
  write_raw(dir.file("looks-compressed.gz"), two_images());
  expect_two_images(read_idx_images(dir.file("looks-raw")));
  expect_two_images(read_idx_images(dir.file("looks-compressed.gz")));
  EXPECT_TRUE(ByteReader(dir.file("looks-raw")).compressed());
  EXPECT_FALSE(ByteReader(dir.file("looks-compressed.gz")).compressed());
}

TEST(Idx, ReadsLabels) {
  TempDir dir;
  write_gz(dir.file("labels.gz"), idx_u8({4}, {9, 0, 3, 255}));
  Tensor y = read_idx_labels(dir.file("labels.gz"));
  ASSERT_EQ(y.shape(), Shape({4}));
  ASSERT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.i32()[0], 9);
  EXPECT_EQ(y.i32()[1], 0);
  EXPECT_EQ(y.i32()[2], 3);
  EXPECT_EQ(y.i32()[3], 255);
}

TEST(Idx, KeepsRank4Images) {
  TempDir dir;
  Bytes data(2 * 2 * 2 * 3);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i);
  write_raw(dir.file("rgb"), idx_u8({2, 2, 2, 3}, data));
  Tensor t = read_idx_images(dir.file("rgb"));
  EXPECT_EQ(t.shape(), Shape({2, 2, 2, 3}));
  EXPECT_EQ(t.u8()[23], 23);
}

TEST(Idx, DecodesEveryElementTypeBigEndian) {
  TempDir dir;
  // signed byte
  Bytes b = idx_header(0x09, {2});
  b.insert(b.end(), {0xFF, 0x05});
  write_raw(dir.file("i8"), b);
  Tensor t = read_idx_labels(dir.file("i8"));
  EXPECT_EQ(t.i32()[0], -1);
  EXPECT_EQ(t.i32()[1], 5);
  // short
  b = idx_header(0x0B, {2});
  b.insert(b.end(), {0x01, 0x02, 0xFF, 0xFE});
  write_raw(dir.file("i16"), b);
  t = read_idx(dir.file("i16"), DType::i32).values;
  EXPECT_EQ(t.i32()[0], 258);
  EXPECT_EQ(t.i32()[1], -2);
  // int
  b = idx_header(0x0C, {1});
  put_be32(b, 0x01020304);
  write_raw(dir.file("i32"), b);
  EXPECT_EQ(read_idx(dir.file("i32"), DType::i32).values.i32()[0], 0x01020304);
  // float: 1.5f is 0x3FC00000
  b = idx_header(0x0D, {1, 1, 1});
  put_be32(b, 0x3FC00000);
  write_raw(dir.file("f32"), b);
  EXPECT_EQ(read_idx_images(dir.file("f32")).f32()[0], 1.5f);
  // double: -2.25 is 0xC002000000000000
  b = idx_header(0x0E, {1});
  put_be32(b, 0xC0020000);
  put_be32(b, 0);
  write_raw(dir.file("f64"), b);
  IdxArray arr = read_idx(dir.file("f64"), DType::f32);
  EXPECT_EQ(arr.type, IdxType::f64);
  EXPECT_EQ(arr.values.f32()[0], -2.25f);
}

TEST(Idx, FloatElementsAreNotLabels) {
  TempDir dir;
  Bytes b = idx_header(0x0D, {1});
  put_be32(b, 0x3FC00000);
  write_raw(dir.file("f"), b);
  EXPECT_TRUE(contains(usage_error([&] { read_idx_labels(dir.file("f")); }), "integers"));
}

TEST(Idx, MissingFile) {
  TempDir dir;
  std::string msg = usage_error([&] { read_idx_images(dir.file("nope")); });
  EXPECT_TRUE(contains(msg, dir.file("nope")));
  EXPECT_TRUE(contains(msg, "no such file"));
}

TEST(Idx, BadMagic) {
  TempDir dir;
  Bytes b = two_images();
  b[0] = 0x12;
  write_raw(dir.file("bad"), b);
  std::string msg = usage_error([&] { read_idx_images(dir.file("bad")); });
  EXPECT_TRUE(contains(msg, dir.file("bad")));
  EXPECT_TRUE(contains(msg, "bad magic 0x12000803"));
  // An unknown type byte is a bad magic too.
  b = two_images();
  b[2] = 0x07;
  write_gz(dir.file("bad.gz"), b);
  EXPECT_TRUE(contains(usage_error([&] { read_idx_images(dir.file("bad.gz")); }), "bad magic"));
  // So is a text file.
  write_text(dir.file("text"), "hello world, not idx\n");
  EXPECT_TRUE(contains(usage_error([&] { read_idx_labels(dir.file("text")); }), "bad magic"));
}

TEST(Idx, EmptyFile) {
  TempDir dir;
  write_raw(dir.file("empty"), {});
  EXPECT_TRUE(
      contains(usage_error([&] { read_idx_images(dir.file("empty")); }), "not an idx file"));
}

TEST(Idx, WrongRank) {
  TempDir dir;
  write_raw(dir.file("labels"), idx_u8({3}, {1, 2, 3}));
  write_raw(dir.file("images"), two_images());
  std::string msg = usage_error([&] { read_idx_images(dir.file("labels")); });
  EXPECT_TRUE(contains(msg, dir.file("labels")));
  EXPECT_TRUE(contains(msg, "rank 3"));
  EXPECT_TRUE(contains(msg, "rank 1"));
  EXPECT_TRUE(contains(usage_error([&] { read_idx_labels(dir.file("images")); }),
                       "expected labels of rank 1"));
}

TEST(Idx, TruncatedData) {
  TempDir dir;
  Bytes b = two_images();
  b.resize(b.size() - 5);
  write_raw(dir.file("short"), b);
  write_gz(dir.file("short.gz"), b);
  for (const char* name : {"short", "short.gz"}) {
    std::string msg = usage_error([&] { read_idx_images(dir.file(name)); });
    EXPECT_TRUE(contains(msg, dir.file(name)));
    EXPECT_TRUE(contains(msg, "truncated"));
    EXPECT_TRUE(contains(msg, "need 12 data bytes, the file has 7"));
  }
}

TEST(Idx, TruncatedHeader) {
  TempDir dir;
  Bytes b = two_images();
  b.resize(9);
  write_raw(dir.file("short"), b);
  EXPECT_TRUE(contains(usage_error([&] { read_idx_images(dir.file("short")); }),
                       "truncated in the header"));
}

TEST(Idx, TrailingGarbage) {
  TempDir dir;
  Bytes b = two_images();
  b.insert(b.end(), {1, 2, 3});
  write_raw(dir.file("long"), b);
  write_gz(dir.file("long.gz"), b);
  for (const char* name : {"long", "long.gz"}) {
    std::string msg = usage_error([&] { read_idx_images(dir.file(name)); });
    EXPECT_TRUE(contains(msg, dir.file(name)));
    EXPECT_TRUE(contains(msg, "3 bytes of trailing garbage"));
  }
}

// Enough pseudo-random pixels that the compressed stream is many bytes long.
Bytes many_images() {
  Bytes data(50 * 28 * 28);
  std::mt19937 rng(1);
  for (auto& v : data) v = static_cast<unsigned char>(rng() % 7);
  return idx_u8({50, 28, 28}, data);
}

TEST(Idx, CutOffGzipStream) {
  TempDir dir;
  write_gz(dir.file("full.gz"), many_images());
  Bytes gz = read_raw(dir.file("full.gz"));
  gz.resize(gz.size() / 2);
  write_raw(dir.file("cut.gz"), gz);
  std::string msg = usage_error([&] { read_idx_images(dir.file("cut.gz")); });
  EXPECT_TRUE(contains(msg, dir.file("cut.gz")));
  EXPECT_TRUE(contains(msg, "cut off"));
}

TEST(Idx, CorruptGzipStream) {
  TempDir dir;
  write_gz(dir.file("full.gz"), many_images());
  Bytes gz = read_raw(dir.file("full.gz"));
  // Garble the deflate data after the 10-byte gzip header.
  for (size_t i = 20; i < 60 && i < gz.size(); ++i) gz[i] ^= 0x5A;
  write_raw(dir.file("bad.gz"), gz);
  std::string msg = usage_error([&] { read_idx_images(dir.file("bad.gz")); });
  EXPECT_TRUE(contains(msg, dir.file("bad.gz")));
  EXPECT_TRUE(contains(msg, "corrupt gzip stream"));
}

TEST(Idx, BadGzipChecksum) {
  TempDir dir;
  write_gz(dir.file("full.gz"), two_images());
  Bytes gz = read_raw(dir.file("full.gz"));
  gz[gz.size() - 8] ^= 1;  // the CRC-32 in the trailer
  write_raw(dir.file("crc.gz"), gz);
  EXPECT_TRUE(
      contains(usage_error([&] { read_idx_images(dir.file("crc.gz")); }), "corrupt gzip stream"));
}

// A header that claims far more than the file can hold (raw: its size;
// gzip: deflate's 1032:1 at most) is refused before anything that size is
// allocated: 2^36 bytes would otherwise be asked of the allocator.
TEST(Idx, HeaderClaimingMoreThanTheFileHoldsIsRefusedUpFront) {
  TempDir dir;
  const Bytes huge = idx_u8({1u << 12, 1u << 12, 1u << 12}, {1, 2, 3});
  write_raw(dir.file("huge"), huge);
  write_gz(dir.file("huge.gz"), huge);
  for (const char* name : {"huge", "huge.gz"}) {
    const std::string msg = usage_error([&] { read_idx_images(dir.file(name)); });
    EXPECT_TRUE(contains(msg, dir.file(name))) << msg;
    EXPECT_TRUE(contains(msg, "more than the file can hold")) << msg;
  }
}

// Four dimensions of 2^32 - 1 overflowed the element count (signed
// overflow, undefined) before it was compared with the limit.
TEST(Idx, DimensionsWhoseProductOverflowsAreRefused) {
  TempDir dir;
  write_raw(dir.file("overflow"), idx_u8({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 1}, {}));
  EXPECT_TRUE(contains(usage_error([&] { read_idx(dir.file("overflow"), DType::f32); }),
                       "too large to be real"));
}

TEST(Idx, FolderIsNotAFile) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("sub"));
  EXPECT_TRUE(contains(usage_error([&] { read_idx_images(dir.file("sub")); }), "folder"));
}

// A pair of idx files as data.idx reads it: images of any size, labels any
// class ids; the two files must agree in length, and a negative label is
// refused with the labels' file named.
TEST(IdxPair, ReadsImagesAndLabelsOfAnySize) {
  TempDir dir;
  Bytes pixels(3 * 5 * 7);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<unsigned char>(i);
  write_gz(dir.file("x.gz"), idx_u8({3, 5, 7}, pixels));
  write_raw(dir.file("y"), idx_u8({3}, {12, 0, 200}));
  const Dataset d = load_idx_pair(dir.file("x.gz"), dir.file("y"), "data.idx");
  ASSERT_EQ(d.x.shape(), Shape({3, 5, 7, 1}));
  ASSERT_EQ(d.y.shape(), Shape({3}));
  EXPECT_EQ(d.x.u8()[104], 104);
  EXPECT_EQ(d.y.i32()[0], 12);
  EXPECT_EQ(d.y.i32()[2], 200);
}

TEST(IdxPair, LengthMismatchAndNegativeLabelNameTheFiles) {
  TempDir dir;
  write_raw(dir.file("x"), idx_u8({2, 1, 1}, {1, 2}));
  write_raw(dir.file("y3"), idx_u8({3}, {0, 1, 2}));
  std::string msg = usage_error([&] { load_idx_pair(dir.file("x"), dir.file("y3"), "data.idx"); });
  EXPECT_TRUE(contains(msg, "data.idx: " + dir.file("x") + " holds 2 images but " + dir.file("y3") +
                                " holds 3 labels"))
      << msg;
  Bytes neg = idx_header(0x09, {2});  // signed bytes
  neg.push_back(1);
  neg.push_back(0xFF);  // -1
  write_raw(dir.file("yneg"), neg);
  msg = usage_error([&] { load_idx_pair(dir.file("x"), dir.file("yneg"), "data.idx"); });
  EXPECT_TRUE(contains(msg, dir.file("yneg") + ": label -1 of example 1 is negative")) << msg;
}

}  // namespace
}  // namespace drun::data

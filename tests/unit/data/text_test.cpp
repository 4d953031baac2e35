// Text reader: windows of ids with next-id targets, both vocabularies, the
// held-out tail, folders, and a sharded, shuffled pipeline over it.
#include "data/text.hpp"

#include <gtest/gtest.h>

#include <set>

#include "data/pipeline.hpp"
#include "data/reader_registry.hpp"
#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;

// The ids of example e, x or y, as a string of the bytes they stand for.
std::string bytes_of(const Dataset& d, int64_t e, bool targets) {
  const int64_t t = d.x.dim(1);
  std::string s;
  for (int64_t i = 0; i < t; ++i)
    s += static_cast<char>(targets ? d.y.i32()[e * t + i] : d.x.u8()[e * t + i]);
  return s;
}

TEST(Text, BytesWindowsAndNextByteTargets) {
  TempDir dir;
  write_text(dir.file("a.txt"), "abcdefghij");  // 10 bytes
  TextOptions o;
  o.paths = {dir.file("a.txt")};
  o.sequence_length = 3;
  const Dataset d = read_text(o, "data.text");
  // Windows at 0, 3, 6 need bytes up to 3, 6, 9: three of them.
  ASSERT_EQ(d.x.shape(), Shape({3, 3}));
  ASSERT_EQ(d.y.shape(), Shape({3, 3}));
  EXPECT_EQ(d.x.dtype(), DType::u8);
  EXPECT_EQ(d.y.dtype(), DType::i32);
  EXPECT_EQ(bytes_of(d, 0, false), "abc");
  EXPECT_EQ(bytes_of(d, 0, true), "bcd");
  EXPECT_EQ(bytes_of(d, 2, false), "ghi");
  EXPECT_EQ(bytes_of(d, 2, true), "hij");
  EXPECT_EQ(d.info["vocabulary_size"], 256);
  EXPECT_FALSE(d.info.contains("vocabulary"));
  check_dataset(d, "text");
}

TEST(Text, StrideOverlapsWindows) {
  TempDir dir;
  write_text(dir.file("a.txt"), "abcdef");
  TextOptions o;
  o.paths = {dir.file("a.txt")};
  o.sequence_length = 4;
  o.stride = 1;
  const Dataset d = read_text(o, "data.text");
  ASSERT_EQ(d.size(), 2);
  EXPECT_EQ(bytes_of(d, 1, false), "bcde");
  EXPECT_EQ(bytes_of(d, 1, true), "cdef");
}

TEST(Text, CharsVocabularyIsTheSortedDistinctBytes) {
  TempDir dir;
  write_text(dir.file("a.txt"), "banana!");
  TextOptions o;
  o.paths = {dir.file("a.txt")};
  o.sequence_length = 6;
  o.chars = true;
  const Dataset d = read_text(o, "data.text");
  EXPECT_EQ(d.info["vocabulary"], "!abn");
  EXPECT_EQ(d.info["vocabulary_size"], 4);
  // b a n a n a -> 2 1 3 1 3 1; targets a n a n a ! -> 1 3 1 3 1 0.
  const std::vector<int> x = {2, 1, 3, 1, 3, 1}, y = {1, 3, 1, 3, 1, 0};
  for (int t = 0; t < 6; ++t) {
    EXPECT_EQ(d.x.u8()[t], x[t]) << t;
    EXPECT_EQ(d.y.i32()[t], y[t]) << t;
  }
}

TEST(Text, ValidationSplitHoldsOutTheTail) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>('0' + i % 10);
  text[95] = 'X';  // only in the last tenth
  write_text(dir.file("a.txt"), text);
  TextOptions o;
  o.paths = {dir.file("a.txt")};
  o.sequence_length = 4;
  o.chars = true;
  o.validation_split = 0.1;
  o.subset = TextSubset::training;
  const Dataset train = read_text(o, "data.text");
  o.subset = TextSubset::validation;
  const Dataset val = read_text(o, "data.text");
  EXPECT_EQ(train.info["bytes"], 90);
  EXPECT_EQ(val.info["bytes"], 10);
  EXPECT_EQ(train.size(), (90 - 5) / 4 + 1);
  EXPECT_EQ(val.size(), (10 - 5) / 4 + 1);
  // Both parts share the vocabulary of the whole text.
  EXPECT_EQ(train.info["vocabulary"], "0123456789X");
  EXPECT_EQ(val.info["vocabulary"], "0123456789X");
  EXPECT_EQ(bytes_of(val, 0, false), std::string({0, 1, 2, 3}));  // bytes 90..93
  EXPECT_EQ(val.y.i32()[3], 4);                                   // after "0123": '4'
  EXPECT_EQ(val.y.i32()[4], 10);                                  // window 94: '4', then 'X'
}

TEST(Text, FolderReadsItsTextFilesInNameOrder) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("corpus"));
  write_text(dir.file("corpus/b"), "world\n%\n");
  write_text(dir.file("corpus/a"), "hello\n%\n");
  write_text(dir.file("corpus/a.dat"), std::string("\0\0\0\2idx", 7));  // binary: skipped
  std::filesystem::create_symlink(dir.file("corpus/a"), dir.file("corpus/a.u8"));
  const Dataset d = open_reader("text", json{{"path", dir.file("corpus")}, {"sequence_length", 15}},
                                "data.text", {});
  EXPECT_EQ(d.info["files"], 2);
  EXPECT_EQ(d.info["bytes"], 16);
  EXPECT_EQ(bytes_of(d, 0, false), "hello\n%\nworld\n%");
}

TEST(Text, ListOfPathsIsConcatenated) {
  TempDir dir;
  write_text(dir.file("a"), "ab");
  write_text(dir.file("b"), "cd");
  const Dataset d =
      open_reader("text", json{{"path", {dir.file("b"), dir.file("a")}}, {"sequence_length", 3}},
                  "data.text", {});
  EXPECT_EQ(bytes_of(d, 0, false), "cda");
  EXPECT_EQ(bytes_of(d, 0, true), "dab");
}

TEST(Text, BadOptionsNameTheValue) {
  TempDir dir;
  write_text(dir.file("a"), "abc");
  auto message = [&](json options) {
    options["path"] = options.value("path", dir.file("a"));
    try {
      open_reader("text", options, "data.text", {});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"sequence_length", 0}}).find("sequence_length must be > 0, got 0"),
            std::string::npos);
  EXPECT_NE(message({{"sequence_length", 3}}).find("3 bytes of text make no window"),
            std::string::npos);
  EXPECT_NE(message({{"sequence_length", 1}, {"vocabulary", "words"}}).find("'words'"),
            std::string::npos);
  EXPECT_NE(message({{"sequence_length", 1}, {"subset", "training"}}).find("validation_split"),
            std::string::npos);
  EXPECT_NE(message({{"sequence_length", 1}, {"path", dir.file("none")}}).find("cannot open"),
            std::string::npos);
}

TEST(Text, ShardedShuffledPipelineSeesEveryWindowOnce) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 61; ++i) text += static_cast<char>(i);
  write_text(dir.file("a"), text);
  TextOptions o;
  o.paths = {dir.file("a")};
  o.sequence_length = 2;
  auto d = std::make_shared<const Dataset>(read_text(o, "data.text"));  // 30 windows
  std::set<int> starts;
  for (int64_t k = 0; k < 3; ++k) {
    PipelineSpec s;
    s.batch_size = 4;
    s.shuffle = true;
    s.seed = 7;
    s.shard_count = 3;
    s.shard_index = k;
    Pipeline p(d, s);
    Batch b;
    p.start_epoch(0);
    while (p.next(b)) {
      ASSERT_EQ(b.x.dtype(), DType::f32);
      ASSERT_EQ(b.y.shape(), Shape({b.size, 2}));
      for (int64_t e = 0; e < b.size; ++e) {
        const float first = b.x.f32()[e * 2];
        EXPECT_EQ(b.x.f32()[e * 2 + 1], first + 1);
        EXPECT_EQ(b.y.i32()[e * 2], first + 1);
        EXPECT_EQ(b.y.i32()[e * 2 + 1], first + 2);
        EXPECT_TRUE(starts.insert(static_cast<int>(first)).second) << first;
      }
    }
  }
  EXPECT_EQ(starts.size(), 30u);
}

}  // namespace
}  // namespace drun::data

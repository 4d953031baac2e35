// The data reader registry (data/reader_list.hpp): every entry documented and
// found by its one name, options checked against its schema before anything is
// read, errors that name the unknown reader or option, and each reader opened
// through its entry with what it needs of the process (ReaderEnv).
#include "data/reader_registry.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;

TEST(ReaderRegistry, EveryEntryIsDocumentedAndOpens) {
  ASSERT_FALSE(reader_registry().empty());
  for (const ReaderInfo* info : reader_registry()) {
    const std::string& name = info->about.name();
    EXPECT_FALSE(info->about.doc.empty()) << name;
    EXPECT_TRUE(info->open) << name;
    EXPECT_FALSE(info->about.schema.options.empty()) << name;
    std::set<std::string> options;
    for (const OptionSpec& o : info->about.schema.options) {
      EXPECT_FALSE(o.doc.empty()) << name << " option " << o.name;
      EXPECT_TRUE(options.insert(o.name).second) << name << " has option " << o.name << " twice";
      EXPECT_TRUE(fits(o.type, o.fallback)) << name << " option " << o.name << "'s default";
      EXPECT_FALSE(o.required && !o.fallback.is_null()) << name << " option " << o.name;
    }
    EXPECT_EQ(&reader_named(name), info);
  }
}

TEST(ReaderRegistry, NamesAreUnique) {
  std::set<std::string> names;
  for (const ReaderInfo* info : reader_registry())
    for (const std::string& n : info->about.names)
      EXPECT_TRUE(names.insert(n).second) << "two readers are called " << n;
  // Each is a drun.data function: a snake_case Lua name.
  for (const std::string& n : names)
    EXPECT_TRUE(!n.empty() && std::islower(static_cast<unsigned char>(n[0])) &&
                n.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos)
        << n;
}

// A reader of pixels (drun.data.NAME scales them to [0, 1]) has a boolean
// `scale` option, true by default, that turns it off; no other reader has one.
TEST(ReaderRegistry, PixelScaleGoesWithAScaleOption) {
  for (const ReaderInfo* info : reader_registry()) {
    const OptionSpec* scale = info->about.schema.find("scale");
    if (info->pixel_scale != 0) {
      ASSERT_TRUE(scale) << info->about.name();
      EXPECT_EQ(scale->type, OptionType::boolean);
      EXPECT_EQ(scale->fallback, json(true));
      EXPECT_DOUBLE_EQ(info->pixel_scale, 1.0 / 255);
    } else {
      EXPECT_FALSE(scale) << info->about.name();
    }
  }
  EXPECT_NE(reader_named("fashion_mnist").pixel_scale, 0);
  EXPECT_NE(reader_named("image_folder").pixel_scale, 0);
  EXPECT_EQ(reader_named("cifar10").pixel_scale, 0);
}

TEST(ReaderRegistry, DescribeListsEveryEntry) {
  const json d = describe_readers();
  ASSERT_EQ(d.size(), reader_registry().size());
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i]["names"][0], reader_registry()[i]->about.name());
    EXPECT_EQ(d[i]["options"].size(), reader_registry()[i]->about.schema.options.size());
    EXPECT_TRUE(d[i].contains("pixel_scale"));
  }
}

TEST(ReaderRegistry, ErrorsNameWhatIsWrong) {
  const std::string unknown =
      usage_error([] { check_reader_options("mnist", json{}, "data.mnist"); });
  EXPECT_TRUE(contains(unknown, "unknown data reader 'mnist'"));
  EXPECT_TRUE(contains(unknown, "fashion_mnist, idx, numpy, hdf5, cifar10, csv, image_folder"));

  const std::string option = usage_error([] {
    check_reader_options("csv", json{{"path", "a.csv"}, {"lable", 1}}, "data.csv");
  });
  EXPECT_TRUE(contains(option, "data.csv: unknown option 'lable'"));
  EXPECT_TRUE(contains(option, "valid options: delimiter, header, label, label_type, path"));

  EXPECT_TRUE(contains(usage_error([] {
                         check_reader_options("idx", json{{"images", "a"}}, "data.idx");
                       }),
                       "data.idx: option 'labels' is required"));
  EXPECT_TRUE(contains(
      usage_error([] {
        check_reader_options(
            "hdf5", json{{"path", "a.h5"}, {"x", "x"}, {"y", "y"}, {"stream", "yes"}}, "data.hdf5");
      }),
      "option 'stream' has the wrong type"));
  // A bad value the schema cannot see is the reader's to refuse, before any file.
  EXPECT_TRUE(contains(usage_error([] {
                         open_reader("hdf5",
                                     json{{"path", json::array({1})}, {"x", "x"}, {"y", "y"}},
                                     "data.hdf5", {});
                       }),
                       "data.hdf5: path must be a file name or a list of them"));
  EXPECT_TRUE(contains(usage_error([] {
                         open_reader("image_folder", json{{"dir", "none"}, {"crop_fraction", 2}},
                                     "data.image_folder", {});
                       }),
                       "crop_fraction must be in (0, 1]"));
}

TEST(ReaderRegistry, OpensArraysAndCsv) {
  const Dataset a = open_reader(
      "arrays",
      json{{"x", json::parse("[[1, 2], [3, 4], [5, 6]]")}, {"y", json::parse("[0, 1, 0]")}},
      "data.arrays", {});
  EXPECT_EQ(a.size(), 3);
  EXPECT_EQ(a.x.shape(), Shape({3, 2}));

  TempDir dir;
  write_text(dir.file("t.csv"), "a;b;c\n1;2;0\n3;4;1\n");
  const Dataset c =
      open_reader("csv", json{{"path", dir.file("t.csv")}, {"delimiter", ";"}}, "data.csv", {});
  EXPECT_EQ(c.size(), 2);
  EXPECT_EQ(c.x.shape(), Shape({2, 2}));
  EXPECT_EQ(c.y.i32()[1], 1);
}

// Without `dir`, a reader of a known data set reads from the process's data dir.
TEST(ReaderRegistry, FashionMnistReadsTheEnvDataDir) {
  TempDir dir;
  Bytes px(3 * 4, 7), lb = {1, 2, 3};
  write_raw(dir.file("t10k-images-idx3-ubyte"), idx_u8({3, 2, 2}, px));
  write_raw(dir.file("t10k-labels-idx1-ubyte"), idx_u8({3}, lb));
  ReaderEnv env;
  env.data_dir = dir.file("");
  const Dataset d =
      open_reader("fashion_mnist", json{{"split", "test"}}, "data.fashion_mnist", env);
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.y.i32()[2], 3);
  // `dir` wins over the env's.
  EXPECT_TRUE(contains(usage_error([&] {
                         open_reader("fashion_mnist",
                                     json{{"split", "test"}, {"dir", "/nonexistent"}},
                                     "data.fashion_mnist", env);
                       }),
                       "/nonexistent"));
}

// cifar10{shard = true} reads this worker's part: the env's worker count and rank.
TEST(ReaderRegistry, Cifar10ShardTakesTheEnvWorker) {
  TempDir dir;
  Bytes test;
  for (int i = 0; i < 4; ++i) {
    test.push_back(static_cast<unsigned char>(i));
    test.insert(test.end(), 3072, static_cast<unsigned char>(i));
  }
  write_raw(dir.file("test_batch.bin"), test);
  ReaderEnv env;
  env.data_dir = dir.file("");
  env.worker_count = 2;
  env.worker_rank = 1;
  const Dataset whole = open_reader("cifar10", json{{"split", "test"}}, "data.cifar10", env);
  EXPECT_EQ(whole.size(), 4);
  EXPECT_FALSE(whole.sharded);
  const Dataset part =
      open_reader("cifar10", json{{"split", "test"}, {"shard", true}}, "data.cifar10", env);
  ASSERT_EQ(part.size(), 2);
  EXPECT_TRUE(part.sharded);
  EXPECT_EQ(part.y.i32()[0], 2);
}

}  // namespace
}  // namespace drun::data

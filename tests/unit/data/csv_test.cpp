// CSV reader: headers, label columns and types, quoting, and errors that name
// the line and column.
#include "data/csv.hpp"

#include <gtest/gtest.h>

#include "data/reader_registry.hpp"
#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;

TEST(Csv, HeaderAutoDetectedAndLastColumnIsTheLabel) {
  TempDir dir;
  write_text(dir.file("a.csv"), "a,b,class\n1.5,2,0\n-3,4e1,2\n");
  Dataset d = read_csv(dir.file("a.csv"));
  ASSERT_EQ(d.x.shape(), Shape({2, 2}));
  ASSERT_EQ(d.y.shape(), Shape({2}));
  ASSERT_EQ(d.y.dtype(), DType::i32);
  EXPECT_EQ(d.x.f32()[0], 1.5f);
  EXPECT_EQ(d.x.f32()[1], 2.0f);
  EXPECT_EQ(d.x.f32()[2], -3.0f);
  EXPECT_EQ(d.x.f32()[3], 40.0f);
  EXPECT_EQ(d.y.i32()[0], 0);
  EXPECT_EQ(d.y.i32()[1], 2);
}

TEST(Csv, NoHeaderAutoDetected) {
  TempDir dir;
  write_text(dir.file("a.csv"), "1,2,3\r\n4,5,6\r\n\n");
  Dataset d = read_csv(dir.file("a.csv"));
  EXPECT_EQ(d.size(), 2);
  EXPECT_EQ(d.y.i32()[1], 6);
}

TEST(Csv, HeaderForcedYesSkipsANumericFirstRow) {
  TempDir dir;
  write_text(dir.file("a.csv"), "1,2,3\n4,5,6\n");
  CsvOptions o;
  o.header = CsvHeader::yes;
  Dataset d = read_csv(dir.file("a.csv"), o);
  EXPECT_EQ(d.size(), 1);
  EXPECT_EQ(d.x.f32()[0], 4.0f);
}

TEST(Csv, HeaderNoMakesATextFirstRowAnError) {
  TempDir dir;
  write_text(dir.file("a.csv"), "x,y\n1,2\n");
  CsvOptions o;
  o.header = CsvHeader::no;
  std::string msg = usage_error([&] { read_csv(dir.file("a.csv"), o); });
  EXPECT_TRUE(contains(msg, dir.file("a.csv") + ":1: column 1: 'x' is not a number"));
}

TEST(Csv, LabelByNameAndFloatLabels) {
  TempDir dir;
  write_text(dir.file("a.csv"), "price, \"size, m2\" ,rooms\n100.5,50,2\n200,80,3\n");
  CsvOptions o;
  o.label_name = "price";
  o.label_type = CsvLabelType::float32;
  Dataset d = read_csv(dir.file("a.csv"), o);
  ASSERT_EQ(d.y.shape(), Shape({2, 1}));
  ASSERT_EQ(d.y.dtype(), DType::f32);
  EXPECT_EQ(d.y.f32()[0], 100.5f);
  EXPECT_EQ(d.y.f32()[1], 200.0f);
  ASSERT_EQ(d.x.shape(), Shape({2, 2}));
  EXPECT_EQ(d.x.f32()[0], 50.0f);
  EXPECT_EQ(d.x.f32()[3], 3.0f);
}

TEST(Csv, LabelByIndexAndDelimiter) {
  TempDir dir;
  write_text(dir.file("a.tsv"), "1\t0.5\t0.25\n0\t1\t2\n");
  CsvOptions o;
  o.label_index = 0;
  o.delimiter = '\t';
  Dataset d = read_csv(dir.file("a.tsv"), o);
  EXPECT_EQ(d.y.i32()[0], 1);
  EXPECT_EQ(d.y.i32()[1], 0);
  EXPECT_EQ(d.x.f32()[1], 0.25f);
}

TEST(Csv, NonNumericCellNamesLineAndColumn) {
  TempDir dir;
  write_text(dir.file("a.csv"), "a,b,c\n1,2,0\n3,oops,1\n");
  std::string msg = usage_error([&] { read_csv(dir.file("a.csv")); });
  EXPECT_TRUE(contains(msg, dir.file("a.csv") + ":3: column 2 ('b'): 'oops' is not a number"));
}

TEST(Csv, EmptyCell) {
  TempDir dir;
  write_text(dir.file("a.csv"), "1,,0\n");
  EXPECT_TRUE(
      contains(usage_error([&] { read_csv(dir.file("a.csv")); }), ":1: column 2: empty cell"));
}

TEST(Csv, RaggedRow) {
  TempDir dir;
  write_text(dir.file("a.csv"), "1,2,0\n3,4,5,1\n");
  std::string msg = usage_error([&] { read_csv(dir.file("a.csv")); });
  EXPECT_TRUE(contains(msg, dir.file("a.csv") + ":2: ragged row: 4 columns, expected 3"));
}

TEST(Csv, BadClassId) {
  TempDir dir;
  write_text(dir.file("a.csv"), "1,2,0\n3,4,1.5\n");
  EXPECT_TRUE(contains(usage_error([&] { read_csv(dir.file("a.csv")); }),
                       ":2: column 3: class id '1.5' is not an integer"));
  write_text(dir.file("b.csv"), "1,2,-1\n");
  EXPECT_TRUE(contains(usage_error([&] { read_csv(dir.file("b.csv")); }), "class id '-1'"));
}

TEST(Csv, OtherErrors) {
  TempDir dir;
  EXPECT_TRUE(contains(usage_error([&] { read_csv(dir.file("missing.csv")); }), "cannot open"));
  write_text(dir.file("empty.csv"), "a,b\n");
  EXPECT_TRUE(contains(usage_error([&] { read_csv(dir.file("empty.csv")); }), "no data rows"));
  write_text(dir.file("one.csv"), "1\n2\n");
  EXPECT_TRUE(contains(usage_error([&] { read_csv(dir.file("one.csv")); }), "found 1 column"));
  write_text(dir.file("q.csv"), "1,\"2,0\n");
  EXPECT_TRUE(contains(usage_error([&] { read_csv(dir.file("q.csv")); }), "unterminated quote"));
  write_text(dir.file("h.csv"), "a,b\n1,2\n");
  CsvOptions o;
  o.label_name = "c";
  EXPECT_TRUE(
      contains(usage_error([&] { read_csv(dir.file("h.csv"), o); }), "no column named 'c'"));
  o = {};
  o.label_index = 5;
  EXPECT_TRUE(contains(usage_error([&] { read_csv(dir.file("h.csv"), o); }),
                       "label column 5 is outside the 2 columns"));
}

TEST(Csv, ParseOptions) {
  const Schema& schema = csv_reader().about.schema;
  Options opts(json{{"path", "x.csv"},
                    {"header", true},
                    {"label", "y"},
                    {"label_type", "float"},
                    {"delimiter", ";"}},
               "data.csv", schema);
  CsvOptions o = parse_csv_options(opts);
  opts.finish();
  EXPECT_EQ(o.header, CsvHeader::yes);
  EXPECT_EQ(o.label_name, "y");
  EXPECT_EQ(o.label_type, CsvLabelType::float32);
  EXPECT_EQ(o.delimiter, ';');

  Options idx(json{{"path", "x.csv"}, {"label", 2}, {"header", "no"}}, "data.csv", schema);
  o = parse_csv_options(idx);
  EXPECT_EQ(o.label_index, 2);
  EXPECT_EQ(o.header, CsvHeader::no);

  // The defaults are the schema's.
  Options plain(json{{"path", "x.csv"}}, "data.csv", schema);
  o = parse_csv_options(plain);
  EXPECT_EQ(o.header, CsvHeader::automatic);
  EXPECT_EQ(o.label_index, -1);
  EXPECT_EQ(o.label_type, CsvLabelType::int32);
  EXPECT_EQ(o.delimiter, ',');

  Options bad(json{{"path", "x.csv"}, {"label_type", "double"}}, "data.csv", schema);
  EXPECT_TRUE(contains(usage_error([&] { parse_csv_options(bad); }), "label_type"));
  Options bad_header(json{{"path", "x.csv"}, {"header", 1}}, "data.csv", schema);
  EXPECT_TRUE(contains(usage_error([&] { parse_csv_options(bad_header); }), "header must be"));
  EXPECT_TRUE(contains(usage_error([&] {
                         Options(json{{"path", "x.csv"}, {"lable", 1}}, "data.csv", schema);
                       }),
                       "unknown option 'lable'"));
}

}  // namespace
}  // namespace drun::data

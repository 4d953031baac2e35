// parse_pipeline_ops: the Lua op list to a PipelineSpec, and its error messages.
#include "data/pipeline_spec.hpp"

#include <gtest/gtest.h>

#include <set>

#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;
using nlohmann::json;

TEST(PipelineOps, EmptyIsTheDefault) {
  PipelineSpec s = parse_pipeline_ops(json());
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_FALSE(s.shuffle);
  EXPECT_TRUE(parse_pipeline_ops(json::array()).select.empty());
}

TEST(PipelineOps, FullExample) {
  PipelineSpec s = parse_pipeline_ops(json::parse(R"([
    {"op":"take","n":1000},{"op":"shuffle","seed":42},{"op":"scale","factor":0.00392},
    {"op":"batch","size":64,"drop_remainder":false},{"op":"prefetch","depth":2},
    {"op":"repeat","count":2},{"op":"shard","count":2,"index":0}])"));
  ASSERT_EQ(s.select.size(), 1u);
  EXPECT_EQ(s.select[0].kind, SelectStep::Kind::take);
  EXPECT_EQ(s.select[0].count, 1000);
  EXPECT_EQ(s.take_batches, -1);
  EXPECT_TRUE(s.shuffle);
  EXPECT_EQ(s.seed, 42u);
  EXPECT_FLOAT_EQ(s.scale, 0.00392f);
  EXPECT_EQ(s.offset, 0.0f);
  EXPECT_EQ(s.batch_size, 64);
  EXPECT_FALSE(s.drop_remainder);
  EXPECT_EQ(s.prefetch, 2);
  EXPECT_EQ(s.repeat, 2);
  EXPECT_EQ(s.shard_count, 2);
  EXPECT_EQ(s.shard_index, 0);
  EXPECT_TRUE(s.shard_even);
}

TEST(PipelineOps, TakeAfterBatchCountsBatches) {
  PipelineSpec s = parse_pipeline_ops(json::parse(
      R"([{"op":"take","n":50},{"op":"batch","size":8,"drop_remainder":true},{"op":"take","n":3}])"));
  ASSERT_EQ(s.select.size(), 1u);
  EXPECT_EQ(s.select[0].count, 50);
  EXPECT_EQ(s.take_batches, 3);
  EXPECT_TRUE(s.drop_remainder);
  s = parse_pipeline_ops(json::parse(R"([{"op":"take","n":50},{"op":"take","n":20}])"));
  EXPECT_EQ(select_examples(s.select, 100).size(), 20u);
}

TEST(PipelineOps, SkipAndTakeAfterBatchMoveAWindowOfBatches) {
  // skip(2):take(5) reads batches 2..6; take(5):skip(2) batches 2..4.
  PipelineSpec s = parse_pipeline_ops(
      json::parse(R"([{"op":"batch","size":4},{"op":"skip","n":2},{"op":"take","n":5}])"));
  EXPECT_EQ(s.skip_batches, 2);
  EXPECT_EQ(s.take_batches, 5);
  s = parse_pipeline_ops(
      json::parse(R"([{"op":"batch","size":4},{"op":"take","n":5},{"op":"skip","n":2}])"));
  EXPECT_EQ(s.skip_batches, 2);
  EXPECT_EQ(s.take_batches, 3);
}

TEST(PipelineOps, SkipAndSplitBeforeBatchSelectExamples) {
  PipelineSpec s = parse_pipeline_ops(json::parse(
      R"([{"op":"skip","n":10},{"op":"split","fraction":0.75,"first":false,"seed":3},
          {"op":"batch","size":4}])"));
  ASSERT_EQ(s.select.size(), 2u);
  EXPECT_EQ(s.select[0].kind, SelectStep::Kind::skip);
  EXPECT_EQ(s.select[0].count, 10);
  EXPECT_EQ(s.select[1].kind, SelectStep::Kind::split);
  EXPECT_DOUBLE_EQ(s.select[1].fraction, 0.75);
  EXPECT_FALSE(s.select[1].first);
  EXPECT_EQ(s.select[1].seed, std::optional<uint64_t>(3));
  EXPECT_EQ(s.skip_batches, 0);
}

TEST(PipelineOps, SplitErrorsNameWhatIsWrong) {
  auto err = [](const char* ops) {
    return usage_error([&] { parse_pipeline_ops(json::parse(ops)); });
  };
  EXPECT_TRUE(contains(err(R"([{"op":"batch","size":4},{"op":"split","fraction":0.5}])"),
                       "split divides examples; call it before batch"));
  EXPECT_TRUE(contains(err(R"([{"op":"split","fraction":1.5}])"),
                       "split fraction must be between 0 and 1"));
  EXPECT_TRUE(contains(err(R"([{"op":"split"}])"), "option 'fraction' is required"));
  EXPECT_TRUE(contains(err(R"([{"op":"skip","n":-1}])"), "n must be >= 0"));
}

TEST(PipelineOps, MapsCompose) {
  // (x * 2 + 1) * 0.5 - 3 = x + 0.5 - 3
  PipelineSpec s = parse_pipeline_ops(json::parse(
      R"([{"op":"map","scale":2,"offset":1},{"op":"scale","factor":0.5},{"op":"map","offset":-3}])"));
  EXPECT_FLOAT_EQ(s.scale, 1.0f);
  EXPECT_FLOAT_EQ(s.offset, -2.5f);
}

TEST(PipelineOps, RepeatsMultiply) {
  PipelineSpec s =
      parse_pipeline_ops(json::parse(R"([{"op":"repeat","count":2},{"op":"repeat","count":3}])"));
  EXPECT_EQ(s.repeat, 6);
}

TEST(PipelineOps, UnknownOpNamesTheValidOnes) {
  std::string msg = usage_error([] { parse_pipeline_ops(json::parse(R"([{"op":"zip"}])")); });
  EXPECT_TRUE(contains(msg, "unknown op 'zip'"));
  EXPECT_TRUE(
      contains(msg, "batch, map, prefetch, repeat, scale, shard, shuffle, skip, split, take"));
}

TEST(PipelineOps, UnknownOptionNamesTheValidOnes) {
  std::string msg = usage_error(
      [] { parse_pipeline_ops(json::parse(R"([{"op":"batch","size":4,"drop_rest":true}])")); });
  EXPECT_TRUE(contains(msg, "'batch'"));
  EXPECT_TRUE(contains(msg, "unknown option 'drop_rest'"));
  EXPECT_TRUE(contains(msg, "drop_remainder"));
}

TEST(PipelineOps, BadValues) {
  auto err = [](const char* ops) {
    return usage_error([&] { parse_pipeline_ops(json::parse(ops)); });
  };
  EXPECT_TRUE(contains(err(R"([{"op":"batch"}])"), "'size' is required"));
  EXPECT_TRUE(contains(err(R"([{"op":"batch","size":0}])"), "size must be >= 1"));
  EXPECT_TRUE(contains(err(R"([{"op":"batch","size":"big"}])"), "wrong type"));
  EXPECT_TRUE(contains(err(R"([{"op":"batch","size":2},{"op":"batch","size":2}])"), "twice"));
  EXPECT_TRUE(contains(err(R"([{"op":"shard","count":2,"index":2}])"), "index 2"));
  EXPECT_TRUE(contains(err(R"([{"op":"take","n":-1}])"), "n must be >= 0"));
  EXPECT_TRUE(contains(err(R"([{"op":"repeat","count":0}])"), "count must be >= 1"));
  EXPECT_TRUE(contains(err(R"([{"n":3}])"), "op 1 must be a table with a string 'op'"));
  EXPECT_TRUE(contains(err(R"({"op":"take"})"), "must be a list"));
}

// The ops' registry: each op's options, checked where a script adds it.
TEST(PipelineOps, CheckOneOpAsTheScriptGivesIt) {
  check_pipeline_op("batch", json{{"size", 8}}, "Dataset:batch");
  check_pipeline_op("batch", json{{"batch_size", 8}, {"drop_remainder", true}}, "Dataset:batch");
  check_pipeline_op("shuffle", json(), "Dataset:shuffle");
  check_pipeline_op("split", json{{"fraction", 0.5}, {"seed", 2}}, "Dataset:split");
  auto err = [](const char* op, const char* options) {
    return usage_error(
        [&] { check_pipeline_op(op, json::parse(options), std::string("Dataset:") + op); });
  };
  const std::string unknown = err("shuffle", R"({"sede": 1})");
  EXPECT_TRUE(contains(unknown, "Dataset:shuffle: unknown option 'sede'"));
  EXPECT_TRUE(contains(unknown, "valid options: buffer_size, seed"));
  // `first` is the Lua side's key, not an option of ds:split.
  EXPECT_TRUE(
      contains(err("split", R"({"fraction": 0.5, "first": false})"), "unknown option 'first'"));
  EXPECT_TRUE(
      contains(err("split", R"({"fraction": 1.5})"), "split fraction must be between 0 and 1"));
  EXPECT_TRUE(contains(err("batch", R"({})"), "Dataset:batch: option 'size' is required"));
  EXPECT_TRUE(contains(err("batch", R"({"size": 0})"), "size must be >= 1"));
  EXPECT_TRUE(contains(err("take", R"({"n": "5"})"), "wrong type"));
  EXPECT_TRUE(contains(err("shard", R"({"count": 2, "index": 2})"), "must be below count 2"));
  EXPECT_TRUE(contains(err("zip", R"({})"), "unknown op 'zip'"));
}

TEST(PipelineOps, BatchSizeIsSizesKerasName) {
  EXPECT_EQ(parse_pipeline_ops(json::parse(R"([{"op":"batch","batch_size":6}])")).batch_size, 6);
  EXPECT_EQ(
      parse_pipeline_ops(json::parse(R"([{"op":"batch","size":4,"batch_size":6}])")).batch_size, 4);
}

TEST(PipelineOps, DescribeGivesOptionsAndShorthands) {
  const json d = describe_pipeline_ops();
  std::set<std::string> names;
  for (const json& op : d) {
    names.insert(op["names"][0].get<std::string>());
    for (const json& o : op["options"]) EXPECT_FALSE(o["doc"].get<std::string>().empty()) << op;
    // A positional shorthand names options of the op.
    for (const json& p : op["positional"]) {
      bool found = false;
      for (const json& o : op["options"]) found = found || o["name"] == p;
      EXPECT_TRUE(found) << op;
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"augment", "batch", "map", "prefetch", "repeat", "scale",
                                          "shard", "shuffle", "skip", "split", "take"}));
  for (const json& op : d) {
    if (op["names"][0] == "batch") {
      EXPECT_EQ(op["positional"], json::array({"size"}));
    }
  }
}

}  // namespace
}  // namespace drun::data

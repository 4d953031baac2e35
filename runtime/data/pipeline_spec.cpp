// Checking a PipelineSpec and building one from the Lua op list.
#include "data/pipeline_spec.hpp"

#include <algorithm>
#include <string>

#include "base/options.hpp"

namespace drun::data {
namespace {

constexpr const char* kValidOps =
    "augment, batch, map, prefetch, repeat, scale, shard, shuffle, skip, split, take";

int64_t at_least(Options& o, const std::string& key, int64_t value, int64_t min) {
  if (value < min)
    throw UsageError(o.owner() + ": " + key + " must be >= " + std::to_string(min) + ", got " +
                     std::to_string(value));
  return value;
}

}  // namespace

void check_pipeline_spec(const PipelineSpec& s) {
  auto fail = [](const std::string& m) { throw UsageError("data pipeline: " + m); };
  for (const SelectStep& step : s.select) check_select_step(step);
  if (s.skip_batches < 0) fail("skip_batches must be >= 0");
  if (s.take_batches < -1) fail("take_batches must be >= 0 (or -1 for all)");
  if (s.shard_count < 1) fail("shard count must be >= 1");
  if (s.shard_index < 0 || s.shard_index >= s.shard_count)
    fail("shard index " + std::to_string(s.shard_index) + " is outside 0.." +
         std::to_string(s.shard_count - 1));
  if (s.batch_size < 1) fail("batch size must be >= 1");
  if (s.repeat < 1) fail("repeat count must be >= 1");
  if (s.prefetch < 0) fail("prefetch depth must be >= 0");
}

PipelineSpec parse_pipeline_ops(const nlohmann::json& ops) {
  PipelineSpec spec;
  // An empty Lua table arrives as an empty object: no ops either.
  if (ops.is_null() || (ops.is_object() && ops.empty())) return spec;
  if (!ops.is_array()) throw UsageError("data pipeline: ops must be a list of {op = name, ...}");
  bool batched = false, sharded = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const nlohmann::json& item = ops[i];
    if (!item.is_object() || !item.contains("op") || !item["op"].is_string())
      throw UsageError("data pipeline: op " + std::to_string(i + 1) +
                       " must be a table with a string 'op'");
    const std::string name = item["op"].get<std::string>();
    Options o(item, "data pipeline op '" + name + "'");
    o.require<std::string>("op");
    if (name == "take" || name == "skip") {
      const int64_t n = at_least(o, "n", o.require<int64_t>("n"), 0);
      if (!batched) {
        spec.select.push_back(name == "take" ? SelectStep::take(n) : SelectStep::skip(n));
      } else if (name == "take") {
        spec.take_batches = spec.take_batches < 0 ? n : std::min(spec.take_batches, n);
      } else {
        // The window of batches moves: what a take already allowed shrinks.
        spec.skip_batches += n;
        if (spec.take_batches >= 0) spec.take_batches = std::max<int64_t>(0, spec.take_batches - n);
      }
    } else if (name == "split") {
      if (batched) throw UsageError(o.owner() + ": split divides examples; call it before batch");
      const auto fraction = o.require<double>("fraction");
      const bool first = o.get<bool>("first", true);
      const auto seed = o.maybe<uint64_t>("seed");
      spec.select.push_back(SelectStep::split(fraction, first, seed));
    } else if (name == "shuffle") {
      spec.shuffle = true;
      spec.seed = o.get<uint64_t>("seed", 0);
      if (const auto n = o.maybe<int64_t>("buffer_size"))
        spec.shuffle_buffer = at_least(o, "buffer_size", *n, 1);
    } else if (name == "scale" || name == "map") {
      float s = name == "scale" ? o.require<float>("factor") : o.get<float>("scale", 1.0f);
      float b = name == "scale" ? 0.0f : o.get<float>("offset", 0.0f);
      // (x * s1 + b1) * s + b = x * (s1 * s) + (b1 * s + b)
      spec.scale *= s;
      spec.offset = spec.offset * s + b;
    } else if (name == "batch") {
      if (batched) throw UsageError("data pipeline: batch given twice (batches of batches?)");
      batched = true;
      spec.batch_size = at_least(o, "size", o.require<int64_t>("size"), 1);
      spec.drop_remainder = o.get<bool>("drop_remainder", false);
    } else if (name == "prefetch") {
      spec.prefetch = at_least(o, "depth", o.get<int64_t>("depth", 2), 0);
    } else if (name == "repeat") {
      spec.repeat *= at_least(o, "count", o.require<int64_t>("count"), 1);
    } else if (name == "shard") {
      if (sharded) throw UsageError("data pipeline: shard given twice");
      sharded = true;
      spec.shard_count = at_least(o, "count", o.require<int64_t>("count"), 1);
      spec.shard_index = at_least(o, "index", o.require<int64_t>("index"), 0);
      spec.shard_even = o.get<bool>("even", true);
      if (spec.shard_index >= spec.shard_count)
        throw UsageError(o.owner() + ": index " + std::to_string(spec.shard_index) +
                         " must be below count " + std::to_string(spec.shard_count));
    } else if (name == "augment") {
      spec.crop_padding = at_least(o, "crop_padding", o.get<int64_t>("crop_padding", 0), 0);
      spec.flip = o.get<bool>("flip", false);
      spec.standardize = o.get<bool>("standardize", false);
      spec.augment_seed = o.get<uint64_t>("seed", 0);
    } else {
      throw UsageError("data pipeline: unknown op '" + name + "'; valid ops: " + kValidOps);
    }
    o.finish();
  }
  check_pipeline_spec(spec);
  return spec;
}

}  // namespace drun::data

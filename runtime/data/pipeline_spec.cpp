// Checking a PipelineSpec and building one from the Lua op list.
#include "data/pipeline_spec.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "base/registry.hpp"

namespace drun::data {
namespace {

int64_t at_least(Options& o, const std::string& key, int64_t value, int64_t min) {
  if (value < min)
    throw UsageError(o.owner() + ": " + key + " must be >= " + std::to_string(min) + ", got " +
                     std::to_string(value));
  return value;
}

// What parsing an op list has seen so far.
struct OpState {
  PipelineSpec spec;
  bool batched = false, sharded = false;
};

// A pipeline op: its name (ds:NAME in Lua), the options a user gives it, its
// positional shorthand (ds:batch(64)), and how it changes the spec.
struct PipelineOpInfo {
  Described about;
  // Keys that the Lua side sets itself (split's `first`), not a user's option.
  Schema internal;
  std::function<void(Options&, OpState&)> apply;
  Schema all;  // about.schema with `internal`: what an op list's entry may hold
};

void take_or_skip(Options& o, OpState& st, bool take) {
  const int64_t n = at_least(o, "n", o.get<int64_t>("n"), 0);
  PipelineSpec& spec = st.spec;
  if (!st.batched) {
    spec.select.push_back(take ? SelectStep::take(n) : SelectStep::skip(n));
  } else if (take) {
    spec.take_batches = spec.take_batches < 0 ? n : std::min(spec.take_batches, n);
  } else {
    // The window of batches moves: what a take already allowed shrinks.
    spec.skip_batches += n;
    if (spec.take_batches >= 0) spec.take_batches = std::max<int64_t>(0, spec.take_batches - n);
  }
}

// x * s + b after what the spec already does: (x * s1 + b1) * s + b = x * (s1 * s) + (b1 * s + b).
void compose(PipelineSpec& spec, float s, float b) {
  spec.scale *= s;
  spec.offset = spec.offset * s + b;
}

Schema::Entry count_option() {
  return {"n", OptionType::integer, kRequired,
          "examples before batch; batches of each epoch after it"};
}

// In the order of the "valid ops: ..." message.
std::vector<PipelineOpInfo> make_ops() {
  std::vector<PipelineOpInfo> ops = {
      {.about = {.names = {"augment"},
                 .doc = "image augmentation of (H, W, C) examples, seeded per (epoch, example)",
                 .schema =
                     {{"crop_padding", OptionType::integer, 0,
                       "zero-pad and crop back at a random offset"},
                      {"flip", OptionType::boolean, false, "left-right flips with probability 1/2"},
                      {"standardize", OptionType::boolean, false, "per-image standardisation"},
                      {"seed", OptionType::integer, 0, "the crops' and flips' seed"}}},
       .apply =
           [](Options& o, OpState& st) {
             st.spec.crop_padding = at_least(o, "crop_padding", o.get<int64_t>("crop_padding"), 0);
             st.spec.flip = o.get<bool>("flip");
             st.spec.standardize = o.get<bool>("standardize");
             st.spec.augment_seed = o.get<uint64_t>("seed");
           }},
      {.about = {.names = {"batch"},
                 .doc = "examples in batches; the last batch of an epoch may be short",
                 .schema = {{"size", OptionType::integer, nullptr, "examples per batch"},
                            {"batch_size", OptionType::integer, nullptr,
                             "examples per batch (Keras' name; size wins)"},
                            {"drop_remainder", OptionType::boolean, false,
                             "drop the short last batch"}},
                 .positional = {"size"}},
       .apply =
           [](Options& o, OpState& st) {
             if (st.batched)
               throw UsageError("data pipeline: batch given twice (batches of batches?)");
             st.batched = true;
             const char* key = o.has("size") || !o.has("batch_size") ? "size" : "batch_size";
             if (!o.has(key)) throw UsageError(o.owner() + ": option 'size' is required");
             st.spec.batch_size = at_least(o, key, o.get<int64_t>(key), 1);
             st.spec.drop_remainder = o.get<bool>("drop_remainder");
           }},
      {.about = {.names = {"map"},
                 .doc = "x * scale + offset while batching; several maps and scales compose",
                 .schema = {{"scale", OptionType::number, 1, "x's factor"},
                            {"offset", OptionType::number, 0, "added after scale"}}},
       .apply =
           [](Options& o, OpState& st) {
             compose(st.spec, o.get<float>("scale"), o.get<float>("offset"));
           }},
      {.about = {.names = {"prefetch"},
                 .doc = "batches made ahead on a background thread",
                 .schema = {{"depth", OptionType::integer, 2, "batches made ahead"}},
                 .positional = {"depth"}},
       .apply =
           [](Options& o, OpState& st) {
             st.spec.prefetch = at_least(o, "depth", o.get<int64_t>("depth"), 0);
           }},
      {.about = {.names = {"repeat"},
                 .doc = "n passes over the data per epoch",
                 .schema = {{"count", OptionType::integer, kRequired, "passes per epoch"}},
                 .positional = {"count"}},
       .apply =
           [](Options& o, OpState& st) {
             st.spec.repeat *= at_least(o, "count", o.get<int64_t>("count"), 1);
           }},
      {.about = {.names = {"scale"},
                 .doc = "x * factor while batching, e.g. pixels to [0, 1]",
                 .schema = {{"factor", OptionType::number, kRequired, "x's factor"}},
                 .positional = {"factor"}},
       .apply = [](Options& o, OpState& st) { compose(st.spec, o.get<float>("factor"), 0.0f); }},
      {.about = {.names = {"shard"},
                 .doc = "every count-th example of each epoch's order from index (0-based)",
                 .schema = {{"count", OptionType::integer, kRequired, "the number of shards"},
                            {"index", OptionType::integer, kRequired, "this shard, 0-based"},
                            {"even", OptionType::boolean, true,
                             "every shard the same number of examples (the few left over are "
                             "left out of the pass); false: the shards cover the data set"}},
                 .positional = {"count", "index"}},
       .apply =
           [](Options& o, OpState& st) {
             if (st.sharded) throw UsageError("data pipeline: shard given twice");
             st.sharded = true;
             PipelineSpec& spec = st.spec;
             spec.shard_count = at_least(o, "count", o.get<int64_t>("count"), 1);
             spec.shard_index = at_least(o, "index", o.get<int64_t>("index"), 0);
             spec.shard_even = o.get<bool>("even");
             if (spec.shard_index >= spec.shard_count)
               throw UsageError(o.owner() + ": index " + std::to_string(spec.shard_index) +
                                " must be below count " + std::to_string(spec.shard_count));
           }},
      {.about = {.names = {"shuffle"},
                 .doc = "a new order every epoch, drawn from seed and the epoch",
                 .schema = {{"seed", OptionType::integer, 0, "the orders' seed"},
                            {"buffer_size", OptionType::integer, nullptr,
                             "a streamed data set's shuffle buffer (default: 10,000 examples or "
                             "64 MiB of them, at least a block); in memory the whole set is "
                             "shuffled and it is not used"}},
                 .positional = {"seed"}},
       .apply =
           [](Options& o, OpState& st) {
             st.spec.shuffle = true;
             st.spec.seed = o.get<uint64_t>("seed");
             if (const auto n = o.maybe<int64_t>("buffer_size"))
               st.spec.shuffle_buffer = at_least(o, "buffer_size", *n, 1);
           }},
      {.about = {.names = {"skip"},
                 .doc = "before batch: all but the first n examples; after: all but the first n "
                        "batches of each epoch",
                 .schema = {count_option()},
                 .positional = {"n"}},
       .apply = [](Options& o, OpState& st) { take_or_skip(o, st, false); }},
      {.about = {.names = {"split"},
                 .doc = "two data sets: round(fraction * n) examples and the rest, fixed before "
                        "any shuffle",
                 .schema = {{"fraction", OptionType::number, kRequired,
                             "share of the first part, in (0, 1)"},
                            {"seed", OptionType::integer, nullptr,
                             "draw the parts at random (default: the data set's order)"}},
                 .positional = {"fraction"}},
       .internal = {{"first", OptionType::boolean, true, "the first part (true) or the rest"}},
       .apply =
           [](Options& o, OpState& st) {
             if (st.batched)
               throw UsageError(o.owner() + ": split divides examples; call it before batch");
             st.spec.select.push_back(SelectStep::split(
                 o.get<double>("fraction"), o.get<bool>("first"), o.maybe<uint64_t>("seed")));
           }},
      {.about = {.names = {"take"},
                 .doc = "before batch: the first n examples; after: the first n batches of each "
                        "epoch",
                 .schema = {count_option()},
                 .positional = {"n"}},
       .apply = [](Options& o, OpState& st) { take_or_skip(o, st, true); }},
  };
  for (PipelineOpInfo& op : ops) op.all = op.about.schema.with(op.internal);
  return ops;
}

const std::vector<const PipelineOpInfo*>& op_registry() {
  static const std::vector<PipelineOpInfo> ops = make_ops();
  static const std::vector<const PipelineOpInfo*> pointers = entry_pointers(ops);
  return pointers;
}

const PipelineOpInfo& op_named(const std::string& name) {
  if (const PipelineOpInfo* op = find_entry(op_registry(), name)) return *op;
  throw UsageError("data pipeline: unknown op '" + name +
                   "'; valid ops: " + registry_names(op_registry()));
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
  OpState st;
  // An empty Lua table arrives as an empty object: no ops either.
  if (ops.is_null() || (ops.is_object() && ops.empty())) return st.spec;
  if (!ops.is_array()) throw UsageError("data pipeline: ops must be a list of {op = name, ...}");
  for (size_t i = 0; i < ops.size(); ++i) {
    const nlohmann::json& item = ops[i];
    if (!item.is_object() || !item.contains("op") || !item["op"].is_string())
      throw UsageError("data pipeline: op " + std::to_string(i + 1) +
                       " must be a table with a string 'op'");
    const std::string name = item["op"].get<std::string>();
    const PipelineOpInfo& op = op_named(name);
    nlohmann::json options = item;
    options.erase("op");
    Options o(std::move(options), "data pipeline op '" + name + "'", op.all);
    op.apply(o, st);
    o.finish();
  }
  check_pipeline_spec(st.spec);
  return st.spec;
}

json describe_pipeline_ops() {
  return describe_all(op_registry());
}

void check_pipeline_op(const std::string& name, const json& options, const std::string& owner) {
  const PipelineOpInfo& op = op_named(name);
  Options(options, owner, op.about.schema);  // the user's options only
  OpState st;
  Options o(options, owner, op.all);
  op.apply(o, st);
  check_pipeline_spec(st.spec);
}

}  // namespace drun::data

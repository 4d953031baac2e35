// PipelineSpec: what an input pipeline does, as a plain value, and the parser
// from the ordered op list that the Lua side builds (ds:shuffle{}:batch(64)...).
//
// Whatever order the ops came in, a pipeline applies them in this fixed order:
//   select (take, skip, split) -> per pass: shuffle, shard -> repeat passes -> map
//   -> augment -> batch -> skip_batches, take_batches
// Only take and skip depend on their place: before `batch` they count
// examples (a fixed subset of the data set, data/selection.hpp), after it
// batches of each epoch. split must come before batch.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/selection.hpp"

namespace drun::data {

struct PipelineSpec {
  std::vector<SelectStep> select;  // empty: every example of the data set

  // Every epoch (and every pass of it) has one permutation, the same on all
  // workers because they share the seed; worker `shard_index` takes positions
  // index, index + count, index + 2*count, ... of it. So the shards of one
  // pass are disjoint and, with shard_even = false, cover the data set.
  // shard_even (the default) gives every worker floor(n / count) examples, so
  // that synchronous strategies see the same number of steps on every worker;
  // the n % count examples at the end of the permutation are left out of that
  // pass (different ones each pass when shuffling).
  int64_t shard_count = 1;
  int64_t shard_index = 0;
  bool shard_even = true;

  // Applied to x while a batch is gathered: x * scale + offset.
  float scale = 1.0f;
  float offset = 0.0f;

  // Image augmentation after scale/offset (data/augment.hpp), for examples of
  // shape (H, W, C): zero-pad by crop_padding and crop back to H x W at a
  // random offset, flip left-right with probability 1/2, per-image
  // standardisation. Random draws depend on (augment_seed, epoch, position in
  // the epoch's stream) only, so a resumed run sees the same images.
  int64_t crop_padding = 0;
  bool flip = false;
  bool standardize = false;
  uint64_t augment_seed = 0;

  // The permutation of (epoch e, pass p) is a function of (seed, e, p) only;
  // without shuffle it is the identity. A streamed data set (Dataset::rows)
  // shuffles its blocks' order instead and passes the examples through a
  // shuffle buffer of shuffle_buffer examples (0: default_shuffle_buffer);
  // in memory the whole set is permuted and shuffle_buffer is not used.
  bool shuffle = false;
  uint64_t seed = 0;
  int64_t shuffle_buffer = 0;

  // The passes of an epoch are one stream: batches run across pass borders and
  // only the epoch's last batch may be short (unless drop_remainder).
  int64_t batch_size = 32;  // Keras' default for fit/evaluate
  bool drop_remainder = false;
  int64_t repeat = 1;         // passes over the (sharded) data per epoch
  int64_t skip_batches = 0;   // the epoch's first batches left out
  int64_t take_batches = -1;  // at most this many batches per epoch after those; -1 = all
  int64_t prefetch = 0;       // batches made ahead on a background thread; 0 = none
};

// Throws UsageError for values out of range (batch_size < 1, shard_index >= shard_count...).
void check_pipeline_spec(const PipelineSpec& spec);

// ops: a JSON array of {"op": name, ...options}; null or [] is the default spec.
// The ops and their options (with types, defaults and descriptions) are a
// registry in pipeline_spec.cpp: take{n}  skip{n}  split{fraction, seed}
// shuffle{seed, buffer_size}  scale{factor}  map{scale, offset}
// batch{size | batch_size, drop_remainder}  prefetch{depth}  repeat{count}
// shard{count, index, even}  augment{crop_padding, flip, standardize, seed};
// split also holds `first` (which part), set by the Lua side.
// Several scale/map ops compose; repeats multiply; takes and skips apply in order.
// An unknown op or option is a UsageError naming the valid ones.
PipelineSpec parse_pipeline_ops(const nlohmann::json& ops);

// The ops' registry entries [{names, doc, options, positional}], for Lua's
// Dataset methods (positional: the shorthand ds:batch(64), ds:shard(4, 0)).
nlohmann::json describe_pipeline_ops();

// Checks one op's options as a script gives them (ds:batch{...}, without the
// keys the Lua side adds) where the script adds the op: an unknown op or
// option, a value of the wrong type or out of range is a UsageError that
// `owner` (e.g. "Dataset:batch") begins. What depends on the other ops
// (split after batch, batch twice) is checked with the whole list.
void check_pipeline_op(const std::string& name, const nlohmann::json& options,
                       const std::string& owner);

}  // namespace drun::data

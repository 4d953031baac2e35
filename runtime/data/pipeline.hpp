// Pipeline: the input of training or evaluation. It turns a shared Dataset (in
// memory, or streamed from files through a StreamReader) into the batches of
// each epoch as a PipelineSpec says (take, shuffle, shard, repeat, map, batch,
// prefetch), deterministically: the batches of (epoch, index) are a function
// of the data, the spec and nothing else, so a restart can seek() to where a
// checkpoint was taken and see the same batches.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "base/timeline.hpp"
#include "data/batch.hpp"
#include "data/dataset.hpp"
#include "data/pipeline_spec.hpp"
#include "data/prefetcher.hpp"
#include "data/stream_layout.hpp"
#include "data/stream_reader.hpp"
#include "data/task_pool.hpp"

namespace drun::data {

class Pipeline {
 public:
  // Throws UsageError for a bad spec or a malformed data set.
  Pipeline(std::shared_ptr<const Dataset> data, PipelineSpec spec);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  const PipelineSpec& spec() const { return spec_; }
  const Dataset& dataset() const { return *data_; }
  int64_t batches_per_epoch() const { return batches_; }
  // Examples delivered per epoch: the sum of the sizes of its batches.
  int64_t examples_per_epoch() const { return examples_; }
  // Examples of one pass before sharding: what take, skip and split keep.
  int64_t pass_size() const { return taken_; }

  // Same as seek(epoch, 0). next() before any start_epoch starts epoch 0.
  void start_epoch(int64_t epoch);
  // Fills out.x, out.y (reusing their storage) with the next batch of the
  // epoch; returns false at the end of the epoch.
  bool next(Batch& out);
  int64_t epoch() const { return epoch_; }
  // Index within the epoch of the batch the next call to next() returns.
  int64_t position() const { return position_; }
  // Continues at batch `batch_index` (0..batches_per_epoch()) of `epoch`.
  void seek(int64_t epoch, int64_t batch_index);
  // Continues `epoch` at `offset` of its permutation, as if the epoch had
  // started there: this worker takes positions offset + shard_index,
  // offset + shard_index + shard_count, ...; batches_per_epoch() and
  // examples_per_epoch() count what is left, until the next epoch. What a job
  // that lost workers resumes with, so that the examples the others had not
  // reached are each seen once (train/reshard.hpp). Only for an input held in
  // memory without repeat, skip or take (UsageError otherwise).
  void seek_from(int64_t epoch, int64_t offset);
  // Where the current epoch started in its permutation (0 but after seek_from).
  int64_t offset() const { return offset_; }
  // The data set's indices of the examples of batch `batch_index` of the
  // current epoch; empty for a streamed data set.
  std::vector<int64_t> examples_of(int64_t batch_index) const;
  // The prefetch thread records each batch it makes there (null: nowhere).
  // Takes effect at the next seek or epoch.
  void set_timeline(timeline::Timeline* timeline) { timeline_ = timeline; }

 private:
  // The epoch's sizes for a stream that starts at `offset` of the permutation.
  void plan_epoch(int64_t offset);
  void build_order(int64_t epoch);
  void start_prefetch();
  void make_batch(int64_t index, Batch& out) const;
  // make_batch's x for a data set whose source makes the examples.
  void make_from_source(int64_t begin, int64_t size, float* bx) const;

  std::shared_ptr<const Dataset> data_;
  PipelineSpec spec_;
  std::vector<int64_t> selected_;  // the data set's examples that take, skip and split keep
  int64_t taken_ = 0;              // their number
  int64_t shard_size_ = 0;         // examples of one pass that this worker sees
  int64_t stream_ = 0;             // examples in the epoch's stream: shard_size_ * repeat
  int64_t first_batch_ = 0;        // batches of the stream that skip leaves out
  int64_t batches_ = 0;
  int64_t examples_ = 0;
  int64_t epoch_ = -1;
  int64_t position_ = 0;
  int64_t offset_ = 0;                    // seek_from's
  std::vector<int64_t> order_;            // the epoch's stream of example indices (in memory)
  std::unique_ptr<StreamLayout> layout_;  // streamed: the blocks and the kept examples
  // Streamed: makes the epoch's stream in make_batch, on the one thread that
  // makes batches (the prefetcher's, else the caller's).
  std::unique_ptr<StreamReader> reader_;
  std::vector<int64_t> perm_;               // scratch for one pass's permutation
  timeline::Timeline* timeline_ = nullptr;  // where the prefetch thread records
  std::unique_ptr<TaskPool> makers_;        // with a source: the threads that make a batch
  std::unique_ptr<Prefetcher> prefetcher_;  // last: its thread reads the members above
};

}  // namespace drun::data

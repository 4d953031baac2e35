// Epoch order (selection, permutation, shard, repeat) and batch gathering (map), with
// optional prefetch on a background thread through the same make_batch().
#include "data/pipeline.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/options.hpp"
#include "base/rng.hpp"
#include "data/augment.hpp"
#include "data/permutation.hpp"

namespace drun::data {

Pipeline::Pipeline(std::shared_ptr<const Dataset> data, PipelineSpec spec)
    : data_(std::move(data)), spec_(spec) {
  if (!data_) throw UsageError("data pipeline: no data set");
  check_dataset(*data_, "data pipeline");
  check_pipeline_spec(spec_);
  if (augments(spec_) && data_->source)
    throw UsageError(
        "data pipeline: augment does not apply to this data set, which augments its examples "
        "itself (data.image_folder's augment = true)");
  if (augments(spec_) && data_->example_shape().rank() != 3)
    throw UsageError(
        "data pipeline: augment works on images of shape (H, W, C); this data set's "
        "examples have shape " +
        data_->example_shape().str());
  // A streamed data set that keeps every example holds no list of them.
  const bool every = data_->rows && spec_.select.empty();
  if (!every) selected_ = select_examples(spec_.select, data_->size());
  taken_ = every ? data_->size() : static_cast<int64_t>(selected_.size());
  plan_epoch(0);
  if (data_->source) makers_ = std::make_unique<TaskPool>(std::max(1, data_->source->threads()));
  if (data_->rows) {
    layout_ = std::make_unique<StreamLayout>(data_->rows->blocks(), std::move(selected_), every);
    selected_.clear();
    const int64_t buffer = !spec_.shuffle ? 1
                           : spec_.shuffle_buffer > 0
                               ? spec_.shuffle_buffer
                               : default_shuffle_buffer(*layout_, data_->rows->row_bytes());
    reader_ = std::make_unique<StreamReader>(data_->rows, *layout_, spec_, shard_size_,
                                             spec_.repeat, buffer);
  }
  if (spec_.prefetch > 0) prefetcher_ = std::make_unique<Prefetcher>(spec_.prefetch);
}

void Pipeline::plan_epoch(int64_t offset) {
  offset_ = offset;
  const int64_t left = taken_ - offset;
  const int64_t count = spec_.shard_count, index = spec_.shard_index;
  shard_size_ =
      spec_.shard_even ? left / count : (left > index ? (left - index + count - 1) / count : 0);
  stream_ = shard_size_ * spec_.repeat;
  const int64_t bs = spec_.batch_size;
  const int64_t all = spec_.drop_remainder ? stream_ / bs : (stream_ + bs - 1) / bs;
  first_batch_ = std::min(all, spec_.skip_batches);
  batches_ = all - first_batch_;
  if (spec_.take_batches >= 0) batches_ = std::min(batches_, spec_.take_batches);
  // Only the stream's last batch may be short; skipped batches may include it.
  examples_ =
      std::min(stream_, (first_batch_ + batches_) * bs) - std::min(stream_, first_batch_ * bs);
}

Pipeline::~Pipeline() {
  if (prefetcher_) prefetcher_->stop();
}

void Pipeline::start_epoch(int64_t epoch) {
  seek(epoch, 0);
}

void Pipeline::seek(int64_t epoch, int64_t batch_index) {
  if (epoch < 0) throw UsageError("data pipeline: epoch must be >= 0");
  // The thread reads order_ and the epoch's plan: stop it before they change.
  if (prefetcher_) prefetcher_->stop();
  // An epoch continued from elsewhere (seek_from) ends with itself.
  if (epoch != epoch_ && offset_ != 0) plan_epoch(0);
  if (batch_index < 0 || batch_index > batches_)
    throw UsageError("data pipeline: batch " + std::to_string(batch_index) +
                     " is outside the epoch's 0.." + std::to_string(batches_));
  if (epoch != epoch_) build_order(epoch);
  epoch_ = epoch;
  position_ = batch_index;
  start_prefetch();
}

void Pipeline::seek_from(int64_t epoch, int64_t offset) {
  if (epoch < 0) throw UsageError("data pipeline: epoch must be >= 0");
  if (offset < 0 || offset > taken_)
    throw UsageError("data pipeline: position " + std::to_string(offset) +
                     " is outside the epoch's 0.." + std::to_string(taken_));
  // Positions of one pass's permutation: a stream of several passes, or one
  // cut by skip and take, has no single position to go on from.
  if (reader_ || spec_.repeat != 1 || spec_.skip_batches != 0 || spec_.take_batches >= 0)
    throw UsageError(
        "data pipeline: continuing an epoch at another worker count needs an input held in "
        "memory without repeat, skip or take");
  if (prefetcher_) prefetcher_->stop();
  plan_epoch(offset);
  build_order(epoch);
  epoch_ = epoch;
  position_ = 0;
  start_prefetch();
}

std::vector<int64_t> Pipeline::examples_of(int64_t batch_index) const {
  if (reader_) return {};
  const int64_t begin = (first_batch_ + batch_index) * spec_.batch_size;
  const int64_t end = std::min(begin + spec_.batch_size, stream_);
  std::vector<int64_t> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(order_[static_cast<size_t>(i)]);
  return out;
}

void Pipeline::start_prefetch() {
  if (prefetcher_)
    prefetcher_->start(position_, batches_, [this, tl = timeline_](int64_t i, Batch& b) {
      timeline::Span span(tl, timeline::Lane::input, timeline::kInput, "make batch", "input",
                          "batch", i);
      make_batch(i, b);
    });
}

void Pipeline::build_order(int64_t epoch) {
  order_.clear();
  if (reader_) return;  // the reader makes the stream as it goes
  order_.reserve(static_cast<size_t>(stream_));
  const int64_t count = spec_.shard_count;
  for (int64_t pass = 0; pass < spec_.repeat; ++pass) {
    if (spec_.shuffle) {
      permutation(taken_, spec_.seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(pass),
                  perm_);
    } else {
      perm_.resize(static_cast<size_t>(taken_));
      for (int64_t i = 0; i < taken_; ++i) perm_[static_cast<size_t>(i)] = i;
    }
    for (int64_t j = 0; j < shard_size_; ++j) {
      const int64_t position = perm_[static_cast<size_t>(offset_ + spec_.shard_index + j * count)];
      order_.push_back(selected_[static_cast<size_t>(position)]);
    }
  }
}

bool Pipeline::next(Batch& out) {
  if (epoch_ < 0) start_epoch(0);
  if (position_ >= batches_) return false;
  if (prefetcher_) {
    if (!prefetcher_->next(out)) return false;
  } else {
    make_batch(position_, out);
  }
  ++position_;
  return true;
}

void Pipeline::make_batch(int64_t index, Batch& out) const {
  const Dataset& d = *data_;
  const int64_t begin = (first_batch_ + index) * spec_.batch_size;
  const int64_t size = std::min(spec_.batch_size, stream_ - begin);
  Shape xs = d.example_shape().with_batch(size), ys = d.y.shape();
  ys[0] = size;
  out.x.ensure(xs, DType::f32);
  out.y.ensure(ys, d.y.dtype());
  out.size = size;

  const int64_t x_inner = xs.inner();
  const size_t y_row = static_cast<size_t>(ys.inner()) * dtype_size(d.y.dtype());
  const bool identity = spec_.scale == 1.0f && spec_.offset == 0.0f;
  const bool augment = augments(spec_);
  const float scale = spec_.scale, offset = spec_.offset;
  const bool bytes = d.rows ? d.rows->dtype() == DType::u8 : !d.source && d.x.dtype() == DType::u8;
  const auto* y = static_cast<const char*>(d.y.raw());
  float* bx = out.x.f32();
  auto* by = static_cast<char*>(out.y.raw());
  if (d.source) {
    make_from_source(begin, size, bx);
    if (!identity)
      for (int64_t j = 0; j < size * x_inner; ++j) bx[j] = bx[j] * scale + offset;
  }
  // Bytes become floats here, one example at a time: for augmentation into
  // a row of scratch, which it then reads.
  std::vector<float> row(bytes && augment ? static_cast<size_t>(x_inner) : 0);
  // make_batch is const for the in-memory order; the reader's state is the
  // stream's position, which only this thread moves.
  if (reader_ && !reader_->is_at(epoch_, begin)) reader_->seek(epoch_, begin);
  for (int64_t k = 0; k < size; ++k) {
    int64_t e = 0;
    const void* streamed = reader_ ? reader_->next(e) : nullptr;
    if (!reader_) e = order_[static_cast<size_t>(begin + k)];
    std::memcpy(by + static_cast<size_t>(k) * y_row, y + static_cast<size_t>(e) * y_row, y_row);
    if (d.source) continue;
    float* dst = bx + k * x_inner;
    const float* src = nullptr;
    if (bytes) {
      const uint8_t* b = streamed ? static_cast<const uint8_t*>(streamed) : d.x.u8() + e * x_inner;
      float* to = augment ? row.data() : dst;
      for (int64_t j = 0; j < x_inner; ++j) to[j] = static_cast<float>(b[j]);
      src = to;
    } else {
      src = streamed ? static_cast<const float*>(streamed) : d.x.f32() + e * x_inner;
    }
    if (augment) {
      augment_example(spec_, xs[1], xs[2], xs[3], src, dst, epoch_, begin + k);
    } else if (identity) {
      if (src != dst) std::memcpy(dst, src, static_cast<size_t>(x_inner) * sizeof(float));
    } else {
      for (int64_t j = 0; j < x_inner; ++j) dst[j] = src[j] * scale + offset;
    }
  }
}

// Example k's random draws (crop, flip) come from its epoch, its pass within
// the epoch and its index in the data set: the same on every resume, and
// independent of the threads, the batch size, the shuffle and the sharding.
void Pipeline::make_from_source(int64_t begin, int64_t size, float* bx) const {
  const ExampleSource& source = *data_->source;
  const int64_t x_inner = source.example_shape().numel();
  makers_->run(size, [&](int64_t k) {
    const int64_t at = begin + k;
    const int64_t e = order_[static_cast<size_t>(at)];
    const int64_t pass = shard_size_ > 0 ? at / shard_size_ : 0;
    const uint64_t draw =
        mix_bits(mix_bits(mix_bits(static_cast<uint64_t>(epoch_)) ^ static_cast<uint64_t>(pass)) ^
                 static_cast<uint64_t>(e));
    source.make(e, draw, bx + k * x_inner);
  });
}

}  // namespace drun::data

// StreamReader: one worker's epoch stream of a streamed data set, with the
// examples' data. Each pass reads its segments (data/stream_layout.hpp) in
// order into a shuffle buffer of `buffer` examples, as tf.data's shuffle does:
// the buffer fills, then each step emits a slot drawn at random and refills it
// with the next example read (or, once the pass's reading is done, with the
// buffer's last). The draws come from (seed, epoch, pass, worker) alone, so the
// stream is a function of the data and the spec. Memory: the buffer and one
// block. seek() replays the draws up to a position without reading (cheap),
// then reads the examples that the buffer holds there, so a resumed run
// continues with the same examples in the same order. Not thread-safe: the
// pipeline calls it from one thread at a time.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "data/pipeline_spec.hpp"
#include "data/row_source.hpp"
#include "data/stream_layout.hpp"

namespace drun::data {

// shuffle{} without buffer_size on a streamed data set: 10,000 examples or
// 64 MiB of them, whichever is fewer, and at least the largest block.
int64_t default_shuffle_buffer(const StreamLayout& layout, size_t row_bytes);

class StreamReader {
 public:
  // pass_size: this worker's examples per pass; passes: per epoch (repeat).
  StreamReader(std::shared_ptr<const RowSource> rows, const StreamLayout& layout,
               const PipelineSpec& spec, int64_t pass_size, int64_t passes, int64_t buffer);

  // Continues at example `at` of `epoch`'s stream.
  void seek(int64_t epoch, int64_t at);
  bool is_at(int64_t epoch, int64_t at) const { return epoch == epoch_ && at == position_; }
  // The stream's next example: sets its row of the data set and returns its
  // x (row_bytes() in the source's dtype), valid until the next call.
  const void* next(int64_t& row);

 private:
  void start_pass(int64_t pass, bool load);
  const unsigned char* emit(int64_t& row, bool load);
  // Puts the pass's next example into slot j (or only its row where !load).
  bool take_input(int64_t& row, unsigned char* dst);
  void refill(size_t j, bool load);
  void load_segment(size_t i);
  // Reads the data of every example the buffer holds (after a replay).
  void load_buffer();
  unsigned char* slot(size_t j) { return slots_.data() + j * row_bytes_; }

  std::shared_ptr<const RowSource> rows_;
  const StreamLayout& layout_;
  const PipelineSpec& spec_;
  const int64_t pass_size_, passes_;
  const size_t capacity_, row_bytes_;

  int64_t epoch_ = -1, position_ = 0;  // where next() continues
  int64_t pass_ = 0, emitted_ = 0;     // the current pass; examples it emitted
  std::vector<Segment> segments_;
  size_t segment_ = 0;  // reading: the segment, and kept position in it
  int64_t kept_ = 0;
  long loaded_ = -1;  // the segment whose rows block_ holds
  int64_t block_row_ = 0;
  std::vector<unsigned char> block_;
  std::vector<int64_t> items_;  // the buffer: rows, slot j's data in slots_
  std::vector<unsigned char> slots_;
  long pending_ = -1;  // the slot emitted last, refilled at the next call
  std::mt19937_64 rng_;
};

}  // namespace drun::data

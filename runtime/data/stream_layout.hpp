// StreamLayout: which examples a worker reads in one pass over a streamed data
// set, and in what order before the shuffle buffer. A pass reads the blocks
// (data/row_source.hpp) in an order drawn from (seed, epoch, pass) -- or in
// file order without shuffle -- as one stream of the examples the selection
// keeps; worker `index` of `count` takes one contiguous range of that stream
// (floor(n / count) examples each where even, else the first n % count workers
// one more). So the workers of a pass share the draw, read disjoint blocks
// (but for the one at each border, split between two of them) and, uneven,
// cover the data set; and each worker's count is the same every pass.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "data/pipeline_spec.hpp"
#include "data/row_source.hpp"

namespace drun::data {

// Examples [first, last) of the kept ones (positions in sorted order), all in one block.
struct Segment {
  int64_t block = 0;
  int64_t first = 0;
  int64_t last = 0;
};

// Worker `index`'s range [begin, end) of a stream of n examples.
std::pair<int64_t, int64_t> shard_range(int64_t n, int64_t count, int64_t index, bool even);

class StreamLayout {
 public:
  // kept: the rows that take, skip and split keep, any order; `all` when they
  // keep every row (then kept is ignored and no list is held).
  StreamLayout(std::vector<RowBlock> blocks, std::vector<int64_t> kept, bool all);

  int64_t taken() const { return block_first_.back(); }
  // The data set's row of kept position k.
  int64_t row(int64_t k) const { return all_ ? k : kept_[static_cast<size_t>(k)]; }
  const std::vector<RowBlock>& blocks() const { return blocks_; }
  int64_t largest_block() const;
  // The segments this worker reads in pass `pass` of `epoch`, in order.
  std::vector<Segment> pass_segments(const PipelineSpec& spec, int64_t epoch, int64_t pass) const;

 private:
  std::vector<RowBlock> blocks_;
  std::vector<int64_t> kept_;         // sorted; empty where all_
  std::vector<int64_t> block_first_;  // kept position where block b starts; one more at the end
  bool all_ = true;
};

}  // namespace drun::data

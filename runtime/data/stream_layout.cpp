#include "data/stream_layout.hpp"

#include <algorithm>

#include "data/permutation.hpp"

namespace drun::data {

std::pair<int64_t, int64_t> shard_range(int64_t n, int64_t count, int64_t index, bool even) {
  const int64_t each = n / count, extra = even ? 0 : n % count;
  const int64_t begin = index * each + std::min(index, extra);
  return {begin, begin + each + (index < extra ? 1 : 0)};
}

StreamLayout::StreamLayout(std::vector<RowBlock> blocks, std::vector<int64_t> kept, bool all)
    : blocks_(std::move(blocks)), kept_(std::move(kept)), all_(all) {
  if (all_) kept_.clear();
  std::sort(kept_.begin(), kept_.end());
  block_first_.reserve(blocks_.size() + 1);
  for (const RowBlock& b : blocks_)
    block_first_.push_back(
        all_ ? b.begin : std::lower_bound(kept_.begin(), kept_.end(), b.begin) - kept_.begin());
  block_first_.push_back(all_ ? (blocks_.empty() ? 0 : blocks_.back().end)
                              : static_cast<int64_t>(kept_.size()));
}

int64_t StreamLayout::largest_block() const {
  int64_t most = 0;
  for (const RowBlock& b : blocks_) most = std::max(most, b.end - b.begin);
  return most;
}

std::vector<Segment> StreamLayout::pass_segments(const PipelineSpec& spec, int64_t epoch,
                                                 int64_t pass) const {
  const auto n = static_cast<int64_t>(blocks_.size());
  std::vector<int64_t> order;
  if (spec.shuffle) {
    permutation(n, spec.seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(pass), order);
  } else {
    order.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  }
  const auto [lo, hi] = shard_range(taken(), spec.shard_count, spec.shard_index, spec.shard_even);
  std::vector<Segment> segments;
  int64_t at = 0;  // position in the pass's stream of block b's first kept example
  for (const int64_t b : order) {
    if (at >= hi) break;
    const int64_t first = block_first_[static_cast<size_t>(b)];
    const int64_t size = block_first_[static_cast<size_t>(b) + 1] - first;
    const int64_t from = std::max(at, lo), to = std::min(at + size, hi);
    if (from < to) segments.push_back({b, first + (from - at), first + (to - at)});
    at += size;
  }
  return segments;
}

}  // namespace drun::data

#include "data/stream_reader.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "data/permutation.hpp"

namespace drun::data {
namespace {

// The buffer's draws use a stream of seeds that no block order uses.
constexpr uint64_t kBufferStream = 0x5eed5eed5eed5eedULL;

}  // namespace

int64_t default_shuffle_buffer(const StreamLayout& layout, size_t row_bytes) {
  const auto by_memory = static_cast<int64_t>((size_t{64} << 20) / std::max<size_t>(1, row_bytes));
  return std::max<int64_t>({1, layout.largest_block(), std::min<int64_t>(10000, by_memory)});
}

StreamReader::StreamReader(std::shared_ptr<const RowSource> rows, const StreamLayout& layout,
                           const PipelineSpec& spec, int64_t pass_size, int64_t passes,
                           int64_t buffer)
    : rows_(std::move(rows)),
      layout_(layout),
      spec_(spec),
      pass_size_(pass_size),
      passes_(passes),
      capacity_(static_cast<size_t>(std::max<int64_t>(1, std::min(buffer, pass_size)))),
      row_bytes_(rows_->row_bytes()),
      slots_(capacity_ * row_bytes_) {}

void StreamReader::seek(int64_t epoch, int64_t at) {
  epoch_ = epoch;
  position_ = at;
  if (pass_size_ == 0 || at >= pass_size_ * passes_) return;  // nothing left to read
  start_pass(at / pass_size_, false);
  int64_t row = 0;
  for (int64_t i = at % pass_size_; i > 0; --i) emit(row, false);
  if (pending_ >= 0) refill(static_cast<size_t>(pending_), false);
  pending_ = -1;
  load_buffer();
}

const void* StreamReader::next(int64_t& row) {
  if (emitted_ == pass_size_) start_pass(pass_ + 1, true);
  ++position_;
  return emit(row, true);
}

void StreamReader::start_pass(int64_t pass, bool load) {
  pass_ = pass;
  emitted_ = 0;
  segments_ = layout_.pass_segments(spec_, epoch_, pass);
  segment_ = 0;
  kept_ = segments_.empty() ? 0 : segments_.front().first;
  loaded_ = -1;
  pending_ = -1;
  rng_.seed(mix_seed(mix_seed(spec_.seed, kBufferStream, static_cast<uint64_t>(spec_.shard_index)),
                     static_cast<uint64_t>(epoch_), static_cast<uint64_t>(pass)));
  items_.clear();
  int64_t row = 0;
  while (items_.size() < capacity_ && take_input(row, load ? slot(items_.size()) : nullptr))
    items_.push_back(row);
}

const unsigned char* StreamReader::emit(int64_t& row, bool load) {
  if (pending_ >= 0) refill(static_cast<size_t>(pending_), load);
  // Without shuffle the buffer holds one example: the stream's order is the reading order.
  const auto j = static_cast<size_t>(uniform_below(rng_, items_.size()));
  row = items_[j];
  pending_ = static_cast<long>(j);
  ++emitted_;
  return slots_.data() + j * row_bytes_;
}

void StreamReader::refill(size_t j, bool load) {
  int64_t row = 0;
  if (take_input(row, load ? slot(j) : nullptr)) {
    items_[j] = row;
    return;
  }
  const size_t last = items_.size() - 1;
  if (j != last) {
    items_[j] = items_[last];
    if (load) std::memcpy(slot(j), slot(last), row_bytes_);
  }
  items_.pop_back();
}

bool StreamReader::take_input(int64_t& row, unsigned char* dst) {
  while (segment_ < segments_.size() && kept_ >= segments_[segment_].last)
    if (++segment_ < segments_.size()) kept_ = segments_[segment_].first;
  if (segment_ >= segments_.size()) return false;
  row = layout_.row(kept_++);
  if (dst) {
    load_segment(segment_);
    std::memcpy(dst, block_.data() + static_cast<size_t>(row - block_row_) * row_bytes_,
                row_bytes_);
  }
  return true;
}

void StreamReader::load_segment(size_t i) {
  if (loaded_ == static_cast<long>(i)) return;
  const Segment& s = segments_[i];
  block_row_ = layout_.row(s.first);
  const int64_t end = layout_.row(s.last - 1) + 1;
  block_.resize(static_cast<size_t>(end - block_row_) * row_bytes_);
  rows_->read(block_row_, end, block_.data());
  loaded_ = static_cast<long>(i);
}

void StreamReader::load_buffer() {
  // Slots by row, so that each block is read once, as one range.
  std::vector<std::pair<int64_t, size_t>> wanted;
  for (size_t j = 0; j < items_.size(); ++j) wanted.emplace_back(items_[j], j);
  std::sort(wanted.begin(), wanted.end());
  const auto& blocks = layout_.blocks();
  std::vector<unsigned char> data;
  for (size_t i = 0; i < wanted.size();) {
    const int64_t first = wanted[i].first;
    const auto block = std::upper_bound(blocks.begin(), blocks.end(), first,
                                        [](int64_t r, const RowBlock& b) { return r < b.begin; }) -
                       1;
    size_t k = i;
    while (k < wanted.size() && wanted[k].first < block->end) ++k;
    const int64_t end = wanted[k - 1].first + 1;
    data.resize(static_cast<size_t>(end - first) * row_bytes_);
    rows_->read(first, end, data.data());
    for (; i < k; ++i)
      std::memcpy(slot(wanted[i].second),
                  data.data() + static_cast<size_t>(wanted[i].first - first) * row_bytes_,
                  row_bytes_);
  }
  loaded_ = -1;
}

}  // namespace drun::data

#include "distributed/hierarchical_allreduce.hpp"

#include <algorithm>
#include <cstring>

namespace drun::distributed {

namespace {
// Slices and segments start on 64-byte boundaries so that vector loads stay aligned.
int64_t padded(int64_t floats) {
  return (floats + 15) / 16 * 16;
}
}  // namespace

bool HierarchicalAllreduce::applies(Communicator& workers) {
  const int local = workers.local_size();
  int uniform = 1;
  for (int size : workers.allgather(local))
    if (size != local) uniform = 0;
  return uniform && local > 1 && local < workers.size();
}

HierarchicalAllreduce::HierarchicalAllreduce(Communicator& workers, int64_t floats)
    : node_(workers.split_node()),
      cross_(workers.split(node_->rank())),
      stride_(padded(floats)),
      window_(*node_, 0, stride_ * node_->size()) {
  started_.reserve(64);
}

// As for ShmAllreduce, the window is left to MPI_Finalize or MPI_Abort: freeing
// it is collective, and a worker that fails must not wait for the others.
HierarchicalAllreduce::~HierarchicalAllreduce() = default;

float* HierarchicalAllreduce::segment() const {
  return window_.data() + stride_ * node_->rank();
}

HierarchicalAllreduce::Slice HierarchicalAllreduce::slice_of(int64_t offset, int64_t n,
                                                             int local_rank) const {
  const int workers = node_->size();
  const int64_t per = padded((n + workers - 1) / workers);
  const int64_t begin = std::min(n, per * local_rank);
  const int64_t end = local_rank == workers - 1 ? n : std::min(n, begin + per);
  return {offset + begin, offset + end};
}

void HierarchicalAllreduce::start(int64_t offset, int64_t n) {
  window_.sync();
  node_->barrier();  // every worker of the node has written this range
  window_.sync();
  // Each worker writes only its own segment's slice, so no two workers write
  // the same memory and every node sums in the same (local rank) order.
  const int me = node_->rank();
  const Slice s = slice_of(offset, n, me);
  float* base = window_.data();
  float* __restrict mine = base + me * stride_;
  for (int k = 0; k < node_->size(); ++k) {
    if (k == me) continue;
    const float* __restrict other = base + k * stride_;
    for (int64_t i = s.begin; i < s.end; ++i) mine[i] += other[i];
  }
  Communicator::Request request = -1;
  if (s.end > s.begin) request = cross_->allreduce_sum_start(mine + s.begin, s.end - s.begin);
  started_.push_back({offset, n, request});
}

void HierarchicalAllreduce::progress() {
  for (const Range& r : started_)
    if (r.request >= 0) cross_->test(r.request);
}

void HierarchicalAllreduce::finish() {
  cross_->wait_all();
  window_.sync();
  node_->barrier();  // every slice holds its sum over all workers
  window_.sync();
  const int me = node_->rank();
  float* base = window_.data();
  float* mine = base + me * stride_;
  for (const Range& r : started_)
    for (int k = 0; k < node_->size(); ++k) {
      if (k == me) continue;
      const Slice s = slice_of(r.offset, r.n, k);
      if (s.end > s.begin)
        std::memcpy(mine + s.begin, base + k * stride_ + s.begin,
                    static_cast<size_t>(s.end - s.begin) * sizeof(float));
    }
  window_.sync();
  node_->barrier();  // nobody reads a segment that the next step's backward overwrites
  window_.sync();
  started_.clear();
}

}  // namespace drun::distributed

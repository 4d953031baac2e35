#include "distributed/shm_allreduce.hpp"

#include <algorithm>
#include <cstring>

namespace drun::distributed {

namespace {
// Segments start on 64-byte boundaries so that vector loads stay aligned.
int64_t padded(int64_t floats) {
  return (floats + 15) / 16 * 16;
}
}  // namespace

ShmAllreduce::ShmAllreduce(Communicator& node, int64_t floats)
    : node_(node), floats_(floats), window_(node, 0, padded(floats) * node.size()) {}

// The window is not freed here: freeing is collective, and a worker that
// fails must not wait in it for the others; MPI_Finalize or MPI_Abort frees it.
ShmAllreduce::~ShmAllreduce() = default;

float* ShmAllreduce::segment() const {
  return window_.data() + padded(floats_) * node_.rank();
}

void ShmAllreduce::sum() {
  const int workers = node_.size();
  const int64_t stride = padded(floats_);
  // Slices of 16-float multiples, the last one taking the rest.
  const int64_t per = padded((floats_ + workers - 1) / workers);
  const int64_t begin = std::min(floats_, per * node_.rank());
  const int64_t end = node_.rank() == workers - 1 ? floats_ : std::min(floats_, begin + per);
  window_.sync();
  node_.barrier();  // every segment is complete
  window_.sync();
  // This worker's slice: summed into its own segment, then copied into the
  // others'. Each slice has one writer, so every worker ends with the same bits.
  float* base = window_.data();
  const int me = node_.rank();
  float* __restrict mine = base + me * stride + begin;
  const int64_t n = end - begin;
  for (int k = 0; k < workers; ++k) {
    if (k == me) continue;
    const float* __restrict other = base + k * stride + begin;
    for (int64_t i = 0; i < n; ++i) mine[i] += other[i];
  }
  for (int k = 0; k < workers; ++k)
    if (k != me && n > 0)
      std::memcpy(base + k * stride + begin, mine, static_cast<size_t>(n) * sizeof(float));
  window_.sync();
  node_.barrier();  // every slice is summed everywhere
  window_.sync();
}

}  // namespace drun::distributed

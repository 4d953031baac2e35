// Copying a batch into caller-owned tensors without allocating once warm.
#include "data/batch.hpp"

#include <cstring>

namespace drun::data {

void copy_batch(const Batch& src, Batch& dst) {
  dst.x.ensure(src.x.shape(), src.x.dtype());
  dst.y.ensure(src.y.shape(), src.y.dtype());
  if (src.x.bytes()) std::memcpy(dst.x.raw(), src.x.raw(), src.x.bytes());
  if (src.y.bytes()) std::memcpy(dst.y.raw(), src.y.raw(), src.y.bytes());
  dst.size = src.size;
}

}  // namespace drun::data

// The index arithmetic of strided_copy (kernels/types.hpp, CopyGeometry),
// written once for the CPU's loop and the CUDA kernel, so both read and sum
// the same elements in the same order.
#pragma once
#include <cstdint>

#include "kernels/host_device.hpp"
#include "kernels/types.hpp"

namespace drun::kernels {

// Where element i (row-major over g.size) is read from in x and written to in y.
struct CopyPlace {
  int64_t x, y;
};

DRUN_HOST_DEVICE inline CopyPlace copy_place(const CopyGeometry& g, int64_t i) {
  CopyPlace p{g.x_offset, g.y_offset};
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t id = i % g.size[d];
    i /= g.size[d];
    p.x += id * g.x_stride[d];
    p.y += id * g.y_stride[d];
  }
  return p;
}

// x summed over the geometry's sum dimensions from `at` (x itself where there are none).
DRUN_HOST_DEVICE inline float copy_source(const CopyGeometry& g, const float* x, int64_t at) {
  if (g.sum_rank == 0) return x[at];
  const int64_t inner = g.sum_rank > 1 ? g.sum_size[1] : 1;
  const int64_t inner_stride = g.sum_rank > 1 ? g.sum_stride[1] : 0;
  float s = 0.0f;
  for (int64_t a = 0; a < g.sum_size[0]; ++a)
    for (int64_t b = 0; b < inner; ++b) s += x[at + a * g.sum_stride[0] + b * inner_stride];
  return s;
}

}  // namespace drun::kernels

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/strided_copy.hpp"
#include "kernels/strided_copy.hpp"

namespace drun::kernels::cuda {

using launch::blocks_for;
using launch::check_launch;
using launch::first_index;
using launch::grid_stride;
using launch::kThreads;

namespace {
// The geometry travels by value, as a kernel parameter (a few hundred bytes).
__global__ void strided_copy_kernel(CopyGeometry g, int64_t total, const float* x, float beta,
                                    float* y) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const CopyPlace p = copy_place(g, i);
    const float v = copy_source(g, x, p.x);
    y[p.y] = beta == 0.0f ? v : beta * y[p.y] + v;
  }
}
}  // namespace

void strided_copy(const CopyGeometry& g, const float* x, float beta, float* y) {
  const int64_t total = g.count();
  if (total == 0) return;
  strided_copy_kernel<<<blocks_for(total), kThreads>>>(g, total, x, beta, y);
  check_launch("strided_copy");
}

}  // namespace drun::kernels::cuda

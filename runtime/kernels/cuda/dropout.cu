// Dropout's forward (dropout.hpp): a grid-stride map, each mask value drawn
// from the hash of its index, as the CPU draws it.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/dropout.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {
__global__ void dropout_forward_kernel(const float* x, float* mask, float* y, int64_t n,
                                       uint64_t key, float keep, float scale) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float m = dropout_uniform(key, i) < keep ? scale : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}
}  // namespace

void dropout_forward(const float* x, float* mask, float* y, int64_t n, uint64_t key, float keep) {
  if (n <= 0) return;
  dropout_forward_kernel<<<blocks_for(n), kThreads>>>(x, mask, y, n, key, keep, 1.0f / keep);
  check_launch("dropout_forward");
}

}  // namespace drun::kernels::cuda

// Dropout's forward (dropout.hpp): a grid-stride map, each mask value drawn
// from the hash of its index, as the CPU draws it.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/dropout.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {
__global__ void set_key_kernel(uint64_t key, int32_t* stored) {
  dropout_store_key(key, stored);
}

__global__ void dropout_forward_kernel(const float* x, float* mask, float* y, int64_t n,
                                       const int32_t* stored, int64_t first, float keep,
                                       float scale) {
  const uint64_t key = dropout_key(stored);
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float m = dropout_uniform(key, first + i) < keep ? scale : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}
}  // namespace

void dropout_set_key(uint64_t key, int32_t* stored) {
  set_key_kernel<<<1, 1>>>(key, stored);
  check_launch("dropout_set_key");
}

void dropout_forward(const float* x, float* mask, float* y, int64_t n, const int32_t* stored,
                     int64_t first, float keep) {
  if (n <= 0) return;
  dropout_forward_kernel<<<blocks_for(n), kThreads>>>(x, mask, y, n, stored, first, keep,
                                                      1.0f / keep);
  check_launch("dropout_forward");
}

}  // namespace drun::kernels::cuda

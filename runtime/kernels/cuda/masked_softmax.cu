// kernels/masked_softmax.hpp on the GPU: one warp per row, as the softmax of
// activation.cu (the row's max and sums by shuffles). Each lane touches only
// its own columns, which is what makes x == y (and dy == dx) safe.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/masked_softmax.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

__global__ void masked_softmax_forward_kernel(float scale, bool causal, int64_t t, const float* x,
                                              float* y, int64_t rows, int64_t cols) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const int64_t kept = masked_softmax_kept(causal, t, r, cols);
    float m = -INFINITY;
    for (int64_t j = lane; j < kept; j += 32) m = fmaxf(m, scale * xr[j]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int64_t j = lane; j < kept; j += 32) {
      const float e = expf(scale * xr[j] - m);
      yr[j] = e;
      sum += e;
    }
    const float inv = 1.0f / warp_sum(sum);
    for (int64_t j = lane; j < cols; j += 32) yr[j] = j < kept ? yr[j] * inv : 0.0f;
  }
}

__global__ void masked_softmax_backward_kernel(float scale, const float* y, const float* dy,
                                               float* dx, int64_t rows, int64_t cols) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float dot = 0.0f;
    for (int64_t j = lane; j < cols; j += 32) dot += dyr[j] * yr[j];
    dot = warp_sum(dot);
    for (int64_t j = lane; j < cols; j += 32) dxr[j] = scale * yr[j] * (dyr[j] - dot);
  }
}

}  // namespace

void masked_softmax_forward(float scale, bool causal, int64_t t, const float* x, float* y,
                            int64_t rows, int64_t cols) {
  if (rows <= 0) return;
  masked_softmax_forward_kernel<<<blocks_for(rows * 32), kThreads>>>(scale, causal, t, x, y, rows,
                                                                     cols);
  check_launch("masked_softmax_forward");
}

void masked_softmax_backward(float scale, const float* y, const float* dy, float* dx, int64_t rows,
                             int64_t cols) {
  if (rows <= 0) return;
  masked_softmax_backward_kernel<<<blocks_for(rows * 32), kThreads>>>(scale, y, dy, dx, rows, cols);
  check_launch("masked_softmax_backward");
}

}  // namespace drun::kernels::cuda

// Layer-norm kernels (see layer_norm.hpp): one warp per row for the forward
// and the input gradient (a row's statistics are two butterfly sums, every
// lane ending with the same value), blocks of kThreads / 32 rows, a grid
// that strides over the rows. The parameter gradients are column sums over
// the rows: one thread per column, rows in order (no atomics, the same bits
// every run).
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/layer_norm.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

constexpr int kRowsPerBlock = kThreads / 32;

__device__ inline int64_t first_row() {
  return blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
}
__device__ inline int64_t row_stride() {
  return static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
}

int row_blocks(int64_t rows) {
  const int64_t b = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return static_cast<int>(b < kMaxGridBlocks ? (b > 0 ? b : 1) : kMaxGridBlocks);
}

__global__ void forward_kernel(const float* __restrict__ x, int64_t rows, int64_t c,
                               const float* __restrict__ gamma, const float* __restrict__ beta,
                               float eps, float* __restrict__ mean, float* __restrict__ inv_std,
                               float* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const float inv_c = 1.0f / static_cast<float>(c);
  for (int64_t r = first_row(); r < rows; r += row_stride()) {
    const float* xr = x + r * c;
    float sum = 0.0f;
    for (int64_t j = lane; j < c; j += 32) sum += xr[j];
    const float m = warp_sum(sum) * inv_c;
    float sq = 0.0f;
    for (int64_t j = lane; j < c; j += 32) sq += (xr[j] - m) * (xr[j] - m);
    const float s = 1.0f / sqrtf(warp_sum(sq) * inv_c + eps);
    if (lane == 0) {
      mean[r] = m;
      inv_std[r] = s;
    }
    float* yr = y + r * c;
    for (int64_t j = lane; j < c; j += 32) {
      const float xhat = (xr[j] - m) * s;
      yr[j] = (gamma ? xhat * gamma[j] : xhat) + (beta ? beta[j] : 0.0f);
    }
  }
}

__global__ void backward_input_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                      int64_t rows, int64_t c, const float* __restrict__ gamma,
                                      const float* __restrict__ mean,
                                      const float* __restrict__ inv_std, float* __restrict__ dx) {
  const int lane = threadIdx.x % 32;
  const float inv_c = 1.0f / static_cast<float>(c);
  for (int64_t r = first_row(); r < rows; r += row_stride()) {
    const float *xr = x + r * c, *dyr = dy + r * c;
    const float m = mean[r], s = inv_std[r];
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (int64_t j = lane; j < c; j += 32) {
      const float g = gamma ? dyr[j] * gamma[j] : dyr[j];
      sum_g += g;
      sum_gx += g * (xr[j] - m) * s;
    }
    const float mg = warp_sum(sum_g) * inv_c, mgx = warp_sum(sum_gx) * inv_c;
    float* dxr = dx + r * c;
    for (int64_t j = lane; j < c; j += 32) {
      const float g = gamma ? dyr[j] * gamma[j] : dyr[j];
      dxr[j] = s * (g - mg - (xr[j] - m) * s * mgx);
    }
  }
}

__global__ void param_grads_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                   int64_t rows, int64_t c, const float* __restrict__ mean,
                                   const float* __restrict__ inv_std, float* __restrict__ dgamma,
                                   float* __restrict__ dbeta) {
  for (int64_t j = first_index(); j < c; j += grid_stride()) {
    float sg = 0.0f, sb = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      const float d = dy[r * c + j];
      sg += d * ((x[r * c + j] - mean[r]) * inv_std[r]);
      sb += d;
    }
    if (dgamma) dgamma[j] = sg;
    if (dbeta) dbeta[j] = sb;
  }
}

}  // namespace

void layer_norm_forward(const float* x, int64_t rows, int64_t c, const float* gamma,
                        const float* beta, float eps, float* mean, float* inv_std, float* y) {
  if (rows == 0 || c == 0) return;
  forward_kernel<<<row_blocks(rows), kThreads>>>(x, rows, c, gamma, beta, eps, mean, inv_std, y);
  check_launch("layer_norm_forward");
}

void layer_norm_backward_input(const float* x, const float* dy, int64_t rows, int64_t c,
                               const float* gamma, const float* mean, const float* inv_std,
                               float* dx) {
  if (rows == 0 || c == 0) return;
  backward_input_kernel<<<row_blocks(rows), kThreads>>>(x, dy, rows, c, gamma, mean, inv_std, dx);
  check_launch("layer_norm_backward (dx)");
}

void layer_norm_param_grads(const float* x, const float* dy, int64_t rows, int64_t c,
                            const float* mean, const float* inv_std, float* dgamma, float* dbeta) {
  if (c == 0) return;
  param_grads_kernel<<<blocks_for(c), kThreads>>>(x, dy, rows, c, mean, inv_std, dgamma, dbeta);
  check_launch("layer_norm_backward (dgamma, dbeta)");
}

}  // namespace drun::kernels::cuda

// Layer-norm kernels (see layer_norm.hpp): one warp per row for the forward
// and the input gradient (a row's statistics are two butterfly sums, every
// lane ending with the same value), blocks of kThreads / 32 rows, a grid
// that strides over the rows. The parameter gradients are column sums over
// the rows, as column_sums (elementwise.cu) takes them: chunks of rows, each
// a block of 32 columns by 8 row groups meeting in shared memory, write one
// partial row each; a second pass adds the chunks in order (no atomics, the
// same bits every run). One thread per column over every row, the first
// version, took 1 ms a call on an H200 (2,048 rows of 128): most of a
// transformer's step.
#include <cuda_runtime.h>

#include "kernels/cuda/device.hpp"
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

// Block (kColTile, kRowGroups), grid (column tiles, chunks): chunk y's sums
// of dgamma's and dbeta's terms to partial[y * c + j] and partial[(chunks + y) * c + j].
__global__ void param_partials_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                      int64_t rows, int64_t c, int64_t rows_per_chunk,
                                      const float* __restrict__ mean,
                                      const float* __restrict__ inv_std,
                                      float* __restrict__ partial) {
  __shared__ float part_g[kRowGroups][kColTile], part_b[kRowGroups][kColTile];
  const int64_t j = blockIdx.x * static_cast<int64_t>(kColTile) + threadIdx.x;
  const int64_t begin = blockIdx.y * rows_per_chunk;
  const int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
  float sg = 0.f, sb = 0.f;
  if (j < c)
#pragma unroll 4
    for (int64_t r = begin + threadIdx.y; r < end; r += kRowGroups) {
      const float d = dy[r * c + j];
      sg += d * ((x[r * c + j] - mean[r]) * inv_std[r]);
      sb += d;
    }
  part_g[threadIdx.y][threadIdx.x] = sg;
  part_b[threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y == 0 && j < c) {
    for (int k = 1; k < kRowGroups; ++k) {
      sg += part_g[k][threadIdx.x];
      sb += part_b[k][threadIdx.x];
    }
    partial[blockIdx.y * c + j] = sg;
    partial[(gridDim.y + blockIdx.y) * c + j] = sb;
  }
}

__global__ void param_sums_kernel(const float* __restrict__ partial, int64_t chunks, int64_t c,
                                  float* __restrict__ dgamma, float* __restrict__ dbeta) {
  for (int64_t j = first_index(); j < c; j += grid_stride()) {
    float sg = 0.f, sb = 0.f;
    for (int64_t k = 0; k < chunks; ++k) {
      sg += partial[k * c + j];
      sb += partial[(chunks + k) * c + j];
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
  if (rows == 0) {
    for (float* g : {dgamma, dbeta})
      if (g)
        check(cudaMemsetAsync(g, 0, sizeof(float) * c, cudaStreamPerThread),
              "layer_norm_backward (no rows)");
    return;
  }
  // Chunks of 64 rows or more: a transformer's 2,048 rows of 128 make 128 blocks.
  const ColumnChunks g = column_chunks(rows, c, 64);
  Scratch partial(static_cast<size_t>(2 * g.chunks * c) * sizeof(float));
  param_partials_kernel<<<g.grid(), g.block()>>>(x, dy, rows, c, g.rows_per_chunk, mean, inv_std,
                                                 partial.f32());
  check_launch("layer_norm_backward (dgamma, dbeta)");
  param_sums_kernel<<<blocks_for(c), kThreads>>>(partial.f32(), g.chunks, c, dgamma, dbeta);
  check_launch("layer_norm_backward (dgamma, dbeta)");
}

}  // namespace drun::kernels::cuda

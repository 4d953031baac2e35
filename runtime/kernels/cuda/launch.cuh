// The launch helpers of the CUDA kernel files (only the .cu files of this
// folder include it): the block size, the capped grid of a grid-stride
// launch, the error checks that name the failed call, the grid-stride loop's
// indices, the butterfly warp reductions, a row's argmax and a block's sum. Every kernel file needs
// the same ones, so they are written once here rather than once per file. All are inline
// (`__device__ inline` on the device), so each translation unit may include this header and the
// objects still link into one library.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace drun::kernels::cuda::launch {

// Threads per block of the one-dimensional launches.
inline constexpr int kThreads = 256;
// Every lane of a warp, the mask of the __shfl_*_sync calls.
inline constexpr unsigned kAllLanes = 0xffffffffu;
// The most blocks a grid-stride launch asks for; the loop covers the rest.
inline constexpr int64_t kMaxGridBlocks = 65535;

// Blocks of kThreads for n threads' worth of work: at least 1, at most max_blocks.
inline int blocks_for(int64_t n, int64_t max_blocks = kMaxGridBlocks) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < max_blocks ? (b > 0 ? b : 1) : max_blocks);
}

// Column sums over rows in chunks (elementwise.cu's column_sums, the layer
// norm's parameter gradients): blocks of kColTile columns by kRowGroups row
// groups that meet in shared memory, a grid of column tiles by chunks of rows;
// each chunk writes one partial row, which a second pass adds in order.
inline constexpr int kColTile = 32;
inline constexpr int kRowGroups = 8;
struct ColumnChunks {
  int64_t tiles, chunks, rows_per_chunk;
  dim3 grid() const { return dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(chunks)); }
  static dim3 block() { return dim3(kColTile, kRowGroups); }
};
// Chunks of at least min_rows rows, about 512 blocks in all.
inline ColumnChunks column_chunks(int64_t rows, int64_t cols, int64_t min_rows) {
  const int64_t tiles = (cols + kColTile - 1) / kColTile;
  int64_t chunks = (rows + min_rows - 1) / min_rows;
  const int64_t most = 512 / tiles > 1 ? 512 / tiles : 1;
  chunks = chunks < 1 ? 1 : (chunks > most ? most : chunks);
  return {tiles, chunks, (rows + chunks - 1) / chunks};
}

// Throws std::runtime_error naming what failed.
inline void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

// Checks the launch just made (a bad configuration, or an earlier kernel's fault).
inline void check_launch(const char* what) {
  check(cudaGetLastError(), what);
}

// The grid-stride loop: for (i = first_index(); i < n; i += grid_stride()).
__device__ inline int64_t first_index() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ inline int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Butterfly reductions: every lane ends with the same value (each step adds
// the same two operands on both sides, so even the rounding agrees).
__device__ inline float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(kAllLanes, v, offset));
  return v;
}

__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kAllLanes, v, offset);
  return v;
}

// One warp's softmax numerators of a row: y = exp(x - max(x)) (each lane its
// own columns, so x and y may alias); returns the row's max and the sum of
// y, the same on every lane.
struct RowExp {
  float max, sum;
};
__device__ inline RowExp warp_exp_row(const float* x, float* y, int64_t cols, int lane) {
  float m = -INFINITY;
  for (int64_t j = lane; j < cols; j += 32) m = fmaxf(m, x[j]);
  m = warp_max(m);
  float sum = 0.0f;
  for (int64_t j = lane; j < cols; j += 32) {
    const float e = expf(x[j] - m);
    y[j] = e;
    sum += e;
  }
  return {m, warp_sum(sum)};
}

// The row's argmax as kernels::cpu::argmax_rows finds it (the first of equal
// maxima; 0 where the first value is NaN or there are no columns), for one
// warp; every lane gets the answer.
__device__ inline int32_t warp_argmax(const float* row, int64_t cols, int lane) {
  float best = 0.f;
  int64_t at = -1;  // none yet
  for (int64_t j = lane; j < cols; j += 32) {
    const float v = row[j];
    if (!isnan(v) && (at < 0 || v > best)) {
      best = v;
      at = j;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(kAllLanes, best, offset);
    const int64_t other_at = __shfl_xor_sync(kAllLanes, at, offset);
    if (other_at >= 0 && (at < 0 || other > best || (other == best && other_at < at))) {
      best = other;
      at = other_at;
    }
  }
  return (cols == 0 || at < 0 || isnan(row[0])) ? 0 : static_cast<int32_t>(at);
}

// The block's total of v in thread 0 (call it at most once per kernel: its
// shared memory is not reset between calls).
__device__ inline double block_sum(double v) {
  __shared__ double part[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kAllLanes, v, offset);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? part[threadIdx.x] : 0.0;
  if (threadIdx.x < 32)
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kAllLanes, v, offset);
  return v;
}

}  // namespace drun::kernels::cuda::launch

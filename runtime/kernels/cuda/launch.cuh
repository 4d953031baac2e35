// The launch helpers of the CUDA kernel files (only the .cu files of this
// folder include it): the block size, the capped grid of a grid-stride
// launch, the error checks that name the failed call, the grid-stride loop's
// indices and the butterfly warp reductions. Every kernel file needs the same
// ones, so they are written once here rather than once per file. All are
// inline (`__device__ inline` on the device), so each translation unit may
// include this header and the objects still link into one library.
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

}  // namespace drun::kernels::cuda::launch

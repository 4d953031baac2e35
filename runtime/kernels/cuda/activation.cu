// The activations of kernels/activation.hpp on the GPU: one grid-stride
// kernel per direction, instantiated for each functor of
// kernels/activation_list.hpp (the same functors the CPU loops run); one warp
// per row for softmax (the row's max and sums by shuffles); a device copy for
// linear.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/activation.hpp"
#include "kernels/cuda/launch.cuh"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

template <class F>
__global__ void forward_kernel(F f, const float* x, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = f.forward(x[i]);
}

template <class F>
__global__ void backward_kernel(F f, const float* x, const float* y, const float* dy, float* dx,
                                int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride())
    dx[i] = f.backward(F::kReadsInput ? x[i] : 0.0f, y[i], dy[i]);
}

// Each lane touches only its own columns, which is what makes x == y safe.
// fmaxf skips NaNs where the CPU's max_element may not, but a NaN in the row
// makes the sum, and so every output, NaN either way.
__global__ void softmax_forward_kernel(const float* x, float* y, int64_t rows, int64_t cols) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float inv = 1.0f / warp_exp_row(xr, yr, cols, lane).sum;
    for (int64_t j = lane; j < cols; j += 32) yr[j] *= inv;
  }
}

__global__ void softmax_backward_kernel(const float* y, const float* dy, float* dx, int64_t rows,
                                        int64_t cols) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float dot = 0.0f;
    for (int64_t j = lane; j < cols; j += 32) dot += dyr[j] * yr[j];
    dot = warp_sum(dot);
    for (int64_t j = lane; j < cols; j += 32) dxr[j] = yr[j] * (dyr[j] - dot);
  }
}

// Checks the launch just made; a failure names the op and the activation.
void check_activation_launch(const char* op, Activation a) {
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(op) + "(" + activation_name(a) +
                             "): " + cudaGetErrorString(rc));
}

void copy_if_distinct(const float* from, float* to, int64_t n, const char* what) {
  if (from != to && n > 0)
    check(
        cudaMemcpyAsync(to, from, sizeof(float) * n, cudaMemcpyDeviceToDevice, cudaStreamPerThread),
        what);
}

}  // namespace

void activation_forward(ActivationFn a, const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  visit_activation(a, [&](auto f) {
    using F = decltype(f);
    if constexpr (std::is_same_v<F, act::Linear>) {
      copy_if_distinct(x, y, n, "activation_forward(linear)");
    } else if constexpr (std::is_same_v<F, act::Softmax>) {
      if (rows <= 0) return;
      softmax_forward_kernel<<<blocks_for(rows * 32), kThreads>>>(x, y, rows, cols);
      check_activation_launch("activation_forward", a.kind);
    } else {
      if (n <= 0) return;
      forward_kernel<F><<<blocks_for(n), kThreads>>>(f, x, y, n);
      check_activation_launch("activation_forward", a.kind);
    }
  });
}

void activation_backward(ActivationFn a, const float* x, const float* y, const float* dy, float* dx,
                         int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  visit_activation(a, [&](auto f) {
    using F = decltype(f);
    if constexpr (std::is_same_v<F, act::Linear>) {
      copy_if_distinct(dy, dx, n, "activation_backward(linear)");
    } else if constexpr (std::is_same_v<F, act::Softmax>) {
      if (rows <= 0) return;
      softmax_backward_kernel<<<blocks_for(rows * 32), kThreads>>>(y, dy, dx, rows, cols);
      check_activation_launch("activation_backward", a.kind);
    } else {
      if (n <= 0) return;
      backward_kernel<F><<<blocks_for(n), kThreads>>>(f, x, y, dy, dx, n);
      check_activation_launch("activation_backward", a.kind);
    }
  });
}

}  // namespace drun::kernels::cuda

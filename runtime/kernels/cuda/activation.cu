// The activations of activation.hpp: a grid-stride map for the elementwise
// ones, one warp per row for softmax (the row's max and sums by shuffles).
#include <cuda_runtime.h>

#include "kernels/cuda/activation.hpp"
#include "kernels/cuda/launch.cuh"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

// relu as std::max(0, x) does it: NaN gives 0.
template <Activation kA>
__global__ void forward_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float v = x[i];
    if constexpr (kA == Activation::relu) y[i] = v > 0.0f ? v : 0.0f;
    if constexpr (kA == Activation::sigmoid) y[i] = 1.0f / (1.0f + expf(-v));
    if constexpr (kA == Activation::tanh) y[i] = tanhf(v);
  }
}

template <Activation kA>
__global__ void backward_kernel(const float* y, const float* dy, float* dx, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    if constexpr (kA == Activation::relu) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    if constexpr (kA == Activation::sigmoid) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
    if constexpr (kA == Activation::tanh) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
  }
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

void copy_if_distinct(const float* from, float* to, int64_t n, const char* what) {
  if (from != to && n > 0)
    check(cudaMemcpyAsync(to, from, sizeof(float) * n, cudaMemcpyDeviceToDevice, 0), what);
}

}  // namespace

void activation_forward(Activation a, const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  switch (a) {
    case Activation::linear:
      copy_if_distinct(x, y, n, "activation_forward(linear)");
      return;
    case Activation::relu:
      forward_kernel<Activation::relu><<<blocks_for(n), kThreads>>>(x, y, n);
      check_launch("activation_forward(relu)");
      return;
    case Activation::sigmoid:
      forward_kernel<Activation::sigmoid><<<blocks_for(n), kThreads>>>(x, y, n);
      check_launch("activation_forward(sigmoid)");
      return;
    case Activation::tanh:
      forward_kernel<Activation::tanh><<<blocks_for(n), kThreads>>>(x, y, n);
      check_launch("activation_forward(tanh)");
      return;
    case Activation::softmax:
      if (rows <= 0) return;
      softmax_forward_kernel<<<blocks_for(rows * 32), kThreads>>>(x, y, rows, cols);
      check_launch("activation_forward(softmax)");
      return;
  }
}

void activation_backward(Activation a, const float* y, const float* dy, float* dx, int64_t rows,
                         int64_t cols) {
  const int64_t n = rows * cols;
  switch (a) {
    case Activation::linear:
      copy_if_distinct(dy, dx, n, "activation_backward(linear)");
      return;
    case Activation::relu:
      backward_kernel<Activation::relu><<<blocks_for(n), kThreads>>>(y, dy, dx, n);
      check_launch("activation_backward(relu)");
      return;
    case Activation::sigmoid:
      backward_kernel<Activation::sigmoid><<<blocks_for(n), kThreads>>>(y, dy, dx, n);
      check_launch("activation_backward(sigmoid)");
      return;
    case Activation::tanh:
      backward_kernel<Activation::tanh><<<blocks_for(n), kThreads>>>(y, dy, dx, n);
      check_launch("activation_backward(tanh)");
      return;
    case Activation::softmax:
      if (rows <= 0) return;
      softmax_backward_kernel<<<blocks_for(rows * 32), kThreads>>>(y, dy, dx, rows, cols);
      check_launch("activation_backward(softmax)");
      return;
  }
}

}  // namespace drun::kernels::cuda

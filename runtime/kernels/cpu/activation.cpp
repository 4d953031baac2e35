// The activations on the CPU: one loop per direction, instantiated for each
// functor of kernels/activation_list.hpp (the same functors the CUDA kernels
// run), plus the copy of linear, the row loops of softmax and the GELU of the
// CPU's own variant (isa/gelu_impl.hpp: libm's erfcf, one value at a time,
// cost a transformer's MLP more than its GEMMs).
#include "kernels/activation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.hpp"

namespace drun::kernels::cpu {

namespace {

template <class F>
void forward(F f, const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  if constexpr (std::is_same_v<F, act::Linear>) {
    if (x != y) std::memcpy(y, x, sizeof(float) * n);
  } else if constexpr (std::is_same_v<F, act::Softmax>) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float m = *std::max_element(xr, xr + cols);
      float sum = 0.0f;
      for (int64_t j = 0; j < cols; ++j) sum += (yr[j] = std::exp(xr[j] - m));
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
    }
  } else if constexpr (std::is_same_v<F, act::Gelu>) {
    cpu_kernels().gelu_forward(x, y, n);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f.forward(x[i]);
  }
}

template <class F>
void backward(F f, const float* x, const float* y, const float* dy, float* dx, int64_t rows,
              int64_t cols) {
  const int64_t n = rows * cols;
  if constexpr (std::is_same_v<F, act::Linear>) {
    if (dx != dy) std::memcpy(dx, dy, sizeof(float) * n);
  } else if constexpr (std::is_same_v<F, act::Softmax>) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* yr = y + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      float dot = 0.0f;
      for (int64_t j = 0; j < cols; ++j) dot += dyr[j] * yr[j];
      for (int64_t j = 0; j < cols; ++j) dxr[j] = yr[j] * (dyr[j] - dot);
    }
  } else if constexpr (std::is_same_v<F, act::Gelu>) {
    cpu_kernels().gelu_backward(x, dy, dx, n);
  } else if constexpr (F::kReadsInput) {
    for (int64_t i = 0; i < n; ++i) dx[i] = f.backward(x[i], y[i], dy[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dx[i] = f.backward(0.0f, y[i], dy[i]);
  }
}

}  // namespace

void activation_forward(ActivationFn a, const float* x, float* y, int64_t rows, int64_t cols) {
  visit_activation(a, [&](auto f) { forward(f, x, y, rows, cols); });
}

void activation_backward(ActivationFn a, const float* x, const float* y, const float* dy, float* dx,
                         int64_t rows, int64_t cols) {
  visit_activation(a, [&](auto f) { backward(f, x, y, dy, dx, rows, cols); });
}

}  // namespace drun::kernels::cpu

#include "kernels/cpu/activation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace drun::kernels::cpu {

void activation_forward(Activation a, const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  switch (a) {
    case Activation::linear:
      if (x != y) std::memcpy(y, x, sizeof(float) * n);
      return;
    case Activation::relu:
      for (int64_t i = 0; i < n; ++i) y[i] = std::max(0.0f, x[i]);
      return;
    case Activation::sigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
      return;
    case Activation::tanh:
      for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
      return;
    case Activation::softmax:
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = *std::max_element(xr, xr + cols);
        float sum = 0.0f;
        for (int64_t j = 0; j < cols; ++j) sum += (yr[j] = std::exp(xr[j] - m));
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
      }
      return;
  }
}

void activation_backward(Activation a, const float* y, const float* dy, float* dx, int64_t rows,
                         int64_t cols) {
  const int64_t n = rows * cols;
  switch (a) {
    case Activation::linear:
      if (dx != dy) std::memcpy(dx, dy, sizeof(float) * n);
      return;
    case Activation::relu:
      for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
      return;
    case Activation::sigmoid:
      for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
      return;
    case Activation::tanh:
      for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
      return;
    case Activation::softmax:
      for (int64_t r = 0; r < rows; ++r) {
        const float* yr = y + r * cols;
        const float* dyr = dy + r * cols;
        float* dxr = dx + r * cols;
        float dot = 0.0f;
        for (int64_t j = 0; j < cols; ++j) dot += dyr[j] * yr[j];
        for (int64_t j = 0; j < cols; ++j) dxr[j] = yr[j] * (dyr[j] - dot);
      }
      return;
  }
}

}  // namespace drun::kernels::cpu

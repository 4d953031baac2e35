// kernels/masked_softmax.hpp on the CPU: one row at a time.
#include "kernels/masked_softmax.hpp"

#include <algorithm>
#include <cmath>

namespace drun::kernels::cpu {

void masked_softmax_forward(float scale, bool causal, int64_t t, const float* x, float* y,
                            int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const int64_t kept = masked_softmax_kept(causal, t, r, cols);
    float m = -INFINITY;
    for (int64_t j = 0; j < kept; ++j) m = std::max(m, scale * xr[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < kept; ++j) sum += (yr[j] = std::exp(scale * xr[j] - m));
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < kept; ++j) yr[j] *= inv;
    std::fill(yr + kept, yr + cols, 0.0f);
  }
}

void masked_softmax_backward(float scale, const float* y, const float* dy, float* dx, int64_t rows,
                             int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float dot = 0.0f;
    for (int64_t j = 0; j < cols; ++j) dot += dyr[j] * yr[j];
    for (int64_t j = 0; j < cols; ++j) dxr[j] = scale * yr[j] * (dyr[j] - dot);
  }
}

}  // namespace drun::kernels::cpu

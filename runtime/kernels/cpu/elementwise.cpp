#include "kernels/elementwise.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels/cpu/cpu_kernels.hpp"

namespace drun::kernels::cpu {

void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void add_relu(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::max(0.0f, a[i] + b[i]);
}

void add_relu_backward(const float* a, const float* b, const float* y, float* dx, int64_t n) {
  // The sum kept by a bit mask rather than `y > 0 ? a + b : 0`: GCC will not
  // compute a floating-point add the select may discard (it could trap), so
  // it branches per element, which the mask (half the ReLU's outputs)
  // mispredicts; the mask vectorises.
  const float* __restrict ar = a;
  const float* __restrict br = b;
  const float* __restrict yr = y;
  float* __restrict dxr = dx;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t keep = yr[i] > 0.0f ? ~0u : 0u;
    dxr[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(ar[i] + br[i]) & keep);
  }
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void fill(float value, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = value;
}

void scale(float alpha, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

void scale_by(const float* alpha, float* y, int64_t n) {
  scale(*alpha, y, n);
}

void bias_add(float* y, const float* b, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] += b[j];
}

// The CPU's own variant (isa/layer_norm_impl.hpp): at the build's target,
// s[j] += x[r, j] reloaded and stored s per row, not knowing whether x's
// next row was s, and did not vectorise.
void column_sums(const float* x, int64_t rows, int64_t cols, float* s) {
  cpu_kernels().column_sums(x, rows, cols, 0, cols, s);
}

void mul(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

bool all_finite(const float* x, int64_t n) {
  // x - x is NaN for both NaN and infinity; one pass without branches.
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc += x[i] - x[i];
  return acc == 0.0f;
}

void mark_nonfinite(const float* x, int64_t n, float* flag) {
  if (!all_finite(x, n)) *flag = 1.0f;
}

void argmax_rows(const float* x, int64_t rows, int64_t cols, int32_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    int64_t best = 0;
    for (int64_t j = 1; j < cols; ++j)
      if (xr[j] > xr[best]) best = j;
    out[r] = static_cast<int32_t>(best);
  }
}

}  // namespace drun::kernels::cpu

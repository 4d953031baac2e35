#include "kernels/elementwise.hpp"

#include <algorithm>
#include <cmath>

namespace drun::kernels::cpu {

void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void add_relu(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::max(0.0f, a[i] + b[i]);
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void scale(float alpha, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

void bias_add(float* y, const float* b, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] += b[j];
}

void column_sums(const float* x, int64_t rows, int64_t cols, float* s) {
  for (int64_t j = 0; j < cols; ++j) s[j] = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) s[j] += x[r * cols + j];
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

// Elementwise loops and reductions over contiguous float arrays. One
// declaration for both backends: kernels/cpu/elementwise.cpp on host
// pointers, kernels/cuda/elementwise.cu on device pointers (launched on the
// default stream, returning at once).
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(void add(const float* a, const float* b, float* y, int64_t n);  // y = a + b
                  void axpy(float alpha, const float* x, float* y, int64_t n);    // y += alpha x
                  void scale(float alpha, float* y, int64_t n);                   // y *= alpha
                  void scale_by(const float* alpha, float* y, int64_t n);         // y *= *alpha
                  void fill(float value, float* y, int64_t n);                    // y = value
                  void bias_add(float* y, const float* b, int64_t rows,
                                int64_t cols);  // y[r, :] += b
                  void column_sums(const float* x, int64_t rows, int64_t cols,
                                   float* s);  // s = sum_r x[r, :]
                  void mul(const float* a, const float* b, float* y, int64_t n);  // y = a * b
                  // *flag = 1 where x has a value that is not finite (does not wait)
                  void mark_nonfinite(const float* x, int64_t n, float* flag);
                  // Row-wise argmax of a (rows, cols) matrix; the first index of the maximum.
                  void argmax_rows(const float* x, int64_t rows, int64_t cols, int32_t* out);)

namespace cpu {
// Whether every value is finite (no NaN, no infinity).
bool all_finite(const float* x, int64_t n);
void add_relu(const float* a, const float* b, float* y, int64_t n);  // y = max(0, a + b)
// dx = y > 0 ? a + b : 0
void add_relu_backward(const float* a, const float* b, const float* y, float* dx, int64_t n);
}  // namespace cpu

}  // namespace drun::kernels

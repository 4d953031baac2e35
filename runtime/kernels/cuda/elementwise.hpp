// Elementwise loops and reductions on the GPU, mirroring kernels/cpu/elementwise.hpp
// on device pointers. Each launches on the default stream and returns at once,
// except all_finite, which waits for its answer.
#pragma once
#include <cstdint>

namespace drun::kernels::cuda {

void add(const float* a, const float* b, float* y, int64_t n);           // y = a + b
void axpy(float alpha, const float* x, float* y, int64_t n);             // y += alpha x
void scale(float alpha, float* y, int64_t n);                            // y *= alpha
void bias_add(float* y, const float* b, int64_t rows, int64_t cols);     // y[r, :] += b
void column_sums(const float* x, int64_t rows, int64_t cols, float* s);  // s = sum_r x[r, :]
void mul(const float* a, const float* b, float* y, int64_t n);           // y = a * b
// Synchronizes: the answer is copied to the host.
bool all_finite(const float* x, int64_t n);
// Row-wise argmax of a (rows, cols) matrix; the first index of the maximum.
void argmax_rows(const float* x, int64_t rows, int64_t cols, int32_t* out);

}  // namespace drun::kernels::cuda

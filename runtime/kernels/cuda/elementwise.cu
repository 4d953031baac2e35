// The elementwise kernels of elementwise.hpp: grid-stride loops for the maps,
// a two-stage column reduction for column_sums, one warp per row for argmax.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/device.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/elementwise.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

__global__ void add_kernel(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = a[i] + b[i];
}

__global__ void axpy_kernel(float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] += alpha * x[i];
}

__global__ void fill_kernel(float value, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = value;
}

__global__ void scale_kernel(float alpha, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] *= alpha;
}

__global__ void scale_by_kernel(const float* alpha, float* y, int64_t n) {
  const float a = *alpha;
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] *= a;
}

__global__ void mul_kernel(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = a[i] * b[i];
}

// Flat over rows * cols, so that narrow rows (cols of 16) still fill every warp.
__global__ void bias_add_kernel(float* y, const float* b, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] += b[i % cols];
}

// column_sums runs blocks of kColTile x kRowGroups threads (launch.cuh's
// column_chunks): the lanes of a warp read consecutive columns of one row
// (coalesced), the row groups of a block split its chunk of rows and meet in
// shared memory. Each chunk of rows writes one partial row; a second pass
// adds the chunks' partials in order, so the result does not depend on
// scheduling. Both loops are unrolled, so that a thread has several loads in
// flight (the sums keep their order).

__global__ void column_partials_kernel(const float* x, int64_t rows, int64_t cols,
                                       int64_t rows_per_chunk, float* partial) {
  __shared__ float part[kRowGroups][kColTile];
  const int64_t j = blockIdx.x * static_cast<int64_t>(kColTile) + threadIdx.x;
  const int64_t begin = blockIdx.y * rows_per_chunk;
  const int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
  float s = 0.f;
  if (j < cols)
#pragma unroll 4
    for (int64_t r = begin + threadIdx.y; r < end; r += kRowGroups) s += x[r * cols + j];
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && j < cols) {
    for (int k = 1; k < kRowGroups; ++k) s += part[k][threadIdx.x];
    partial[blockIdx.y * cols + j] = s;
  }
}

__global__ void sum_partials_kernel(const float* partial, int64_t chunks, int64_t cols, float* s) {
  for (int64_t j = first_index(); j < cols; j += grid_stride()) {
    float t = 0.f;
#pragma unroll 8
    for (int64_t c = 0; c < chunks; ++c) t += partial[c * cols + j];
    s[j] = t;
  }
}

// Every block whose part of x holds a value that is not finite writes the
// same 1: no ordering needed.
__global__ void mark_nonfinite_kernel(const float* x, int64_t n, float* flag) {
  bool ok = true;
  for (int64_t i = first_index(); i < n; i += grid_stride()) ok &= isfinite(x[i]);
  if (__syncthreads_or(!ok) && threadIdx.x == 0) *flag = 1.0f;
}

// One warp per row. The CPU scans left to right keeping the first strictly
// larger value, so a NaN in column 0 wins (nothing compares greater) and any
// other NaN is skipped: here lanes ignore NaNs, and column 0 is checked last.
__global__ void argmax_rows_kernel(const float* x, int64_t rows, int64_t cols, int32_t* out) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const int32_t at = warp_argmax(x + r * cols, cols, lane);
    if (lane == 0) out[r] = at;
  }
}

}  // namespace

void add(const float* a, const float* b, float* y, int64_t n) {
  add_kernel<<<blocks_for(n), kThreads>>>(a, b, y, n);
  check_launch("add");
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
  axpy_kernel<<<blocks_for(n), kThreads>>>(alpha, x, y, n);
  check_launch("axpy");
}

void fill(float value, float* y, int64_t n) {
  fill_kernel<<<blocks_for(n), kThreads>>>(value, y, n);
  check_launch("fill");
}

void scale(float alpha, float* y, int64_t n) {
  scale_kernel<<<blocks_for(n), kThreads>>>(alpha, y, n);
  check_launch("scale");
}

void scale_by(const float* alpha, float* y, int64_t n) {
  scale_by_kernel<<<blocks_for(n), kThreads>>>(alpha, y, n);
  check_launch("scale_by");
}

void bias_add(float* y, const float* b, int64_t rows, int64_t cols) {
  bias_add_kernel<<<blocks_for(rows * cols), kThreads>>>(y, b, rows, cols);
  check_launch("bias_add");
}

void column_sums(const float* x, int64_t rows, int64_t cols, float* s) {
  if (cols <= 0) return;
  const ColumnChunks g = column_chunks(rows, cols, 256);
  if (g.chunks == 1) {
    column_partials_kernel<<<g.grid(), g.block()>>>(x, rows, cols, g.rows_per_chunk, s);
    check_launch("column_sums");
    return;
  }
  Scratch partial(static_cast<size_t>(g.chunks * cols) * sizeof(float));
  column_partials_kernel<<<g.grid(), g.block()>>>(x, rows, cols, g.rows_per_chunk, partial.f32());
  check_launch("column_sums");
  sum_partials_kernel<<<blocks_for(cols), kThreads>>>(partial.f32(), g.chunks, cols, s);
  check_launch("column_sums");
}

void mul(const float* a, const float* b, float* y, int64_t n) {
  mul_kernel<<<blocks_for(n), kThreads>>>(a, b, y, n);
  check_launch("mul");
}

void mark_nonfinite(const float* x, int64_t n, float* flag) {
  if (n <= 0) return;
  mark_nonfinite_kernel<<<blocks_for(n), kThreads>>>(x, n, flag);
  check_launch("mark_nonfinite");
}

void argmax_rows(const float* x, int64_t rows, int64_t cols, int32_t* out) {
  if (rows <= 0) return;
  argmax_rows_kernel<<<blocks_for(rows * 32), kThreads>>>(x, rows, cols, out);
  check_launch("argmax_rows");
}

}  // namespace drun::kernels::cuda

// y = x w + b for the layers whose forward is a product plus a bias (Dense,
// the recurrent layers' input projection, attention's projections).
#pragma once
#include <cstdint>

#include "kernels/ops.hpp"
#include "nn/copy_views.hpp"

namespace drun::nn {

// y (rows, cols) = x (rows, in) w (in, cols) + b (cols), b optional. The
// bias is written into y's rows first and the product added to it (beta 1):
// with beta 0 the CPU's BLAS zeroes y before the product, and the bias was
// a second pass over y (an LSTM 256's input projection at batch 32 x 64
// steps: 8 MiB, two passes fewer a step).
inline void affine_forward(const kernels::Exec& ex, int64_t rows, int64_t in, int64_t cols,
                           const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y) {
  if (!b) {
    kernels::matmul(ex, false, false, rows, cols, in, 1.0f, x, w, 0.0f, y);
    return;
  }
  const Shape out{rows, cols};
  kernels::strided_copy(ex, copy_geometry(out, Strides{0, 1}, row_major_strides(out)), *b, 0.0f, y);
  kernels::matmul(ex, false, false, rows, cols, in, 1.0f, x, w, 1.0f, y);
}

}  // namespace drun::nn

// y = x w + b for the layers whose forward is a product plus a bias (Dense,
// the recurrent layers' input projection, attention's projections).
#pragma once
#include <cstdint>

#include "kernels/ops.hpp"

namespace drun::nn {

// y (rows, cols) = x (rows, in) w (in, cols) + b (cols), b optional.
inline void affine_forward(const kernels::Exec& ex, int64_t rows, int64_t in, int64_t cols,
                           const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y) {
  if (b)
    kernels::affine(ex, rows, in, cols, x, w, *b, y);
  else
    kernels::matmul(ex, false, false, rows, cols, in, 1.0f, x, w, 0.0f, y);
}

}  // namespace drun::nn

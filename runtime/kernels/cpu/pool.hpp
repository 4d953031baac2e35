// 2-D pooling on NHWC activations.
//   x (N, H, W, C) -> y (N, OH, OW, C); argmax (N, OH, OW, C) holds, for max
//   pooling, the input pixel (iy * W + ix) that won, so backward is a scatter.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"  // PoolGeometry, pool_geometry

namespace drun::kernels::cpu {

void max_pool_forward(const PoolGeometry& g, const float* x, float* y, int32_t* argmax,
                      int threads);
// dx is overwritten.
void max_pool_backward(const PoolGeometry& g, const float* dy, const int32_t* argmax, float* dx,
                       int threads);
// Padding is excluded from the average, as in Keras.
void avg_pool_forward(const PoolGeometry& g, const float* x, float* y, int threads);
void avg_pool_backward(const PoolGeometry& g, const float* dy, float* dx, int threads);

// Global average pooling: (N, H, W, C) -> (N, C).
void global_avg_pool_forward(int64_t n, int64_t hw, int64_t c, const float* x, float* y);
void global_avg_pool_backward(int64_t n, int64_t hw, int64_t c, const float* dy, float* dx);

}  // namespace drun::kernels::cpu

// 2-D pooling on NHWC device tensors, the CUDA twin of kernels/cpu/pool.hpp:
// the same geometry (kernels/types.hpp), the same argmax
// integers and tie-breaking, the same sums. Pointers are device pointers;
// each call launches on the default stream and returns without waiting.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels::cuda {

// argmax (N, OH, OW, C) holds the winning input pixel (iy * W + ix), the
// first maximum in window order, as on the CPU.
void max_pool_forward(const PoolGeometry& g, const float* x, float* y, int32_t* argmax);
// dx is overwritten.
void max_pool_backward(const PoolGeometry& g, const float* dy, const int32_t* argmax, float* dx);
// Padding is excluded from the average, as in Keras.
void avg_pool_forward(const PoolGeometry& g, const float* x, float* y);
// dx is overwritten.
void avg_pool_backward(const PoolGeometry& g, const float* dy, float* dx);

// Global average pooling: (N, H, W, C) -> (N, C).
void global_avg_pool_forward(int64_t n, int64_t hw, int64_t c, const float* x, float* y);
void global_avg_pool_backward(int64_t n, int64_t hw, int64_t c, const float* dy, float* dx);

}  // namespace drun::kernels::cuda

// 2-D pooling on NHWC activations.
//   x (N, H, W, C) -> y (N, OH, OW, C); argmax (N, OH, OW, C) holds, for max
//   pooling, the input pixel (iy * W + ix) that won, so backward is a scatter.
#pragma once
#include <cstdint>

namespace drun::kernels::cpu {

struct PoolGeometry {
  int64_t n, h, w, c;
  int64_t ph, pw, sh, sw;
  int64_t pad_top, pad_left;
  int64_t oh, ow;
};

PoolGeometry pool_geometry(int64_t n, int64_t h, int64_t w, int64_t c, int64_t ph, int64_t pw,
                           int64_t sh, int64_t sw, bool same_padding);

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

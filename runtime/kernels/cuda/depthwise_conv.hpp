// Depthwise 2-D convolution on NHWC device tensors, the CUDA twin of
// kernels/cpu/depthwise_conv2d.hpp: the same geometry (co = c * m) and the
// same (KH, KW, C, M) filter layout. Each call launches on the default
// stream and returns without waiting.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels::cuda {

// y = dwconv(x, w) + b; b may be null (no bias).
void depthwise_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                              float* y);
// dx overwritten.
void depthwise_conv2d_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                    float* dx);
// dw overwritten.
void depthwise_conv2d_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                      float* dw);

}  // namespace drun::kernels::cuda

// Depthwise 2-D convolution on NHWC activations (op_list.hpp): each input
// channel ci through its own m filters, m = g.co / g.c, into outputs
// ci * m ... ci * m + m - 1. w (KH, KW, C, M) is read as (KH, KW, CO), so one
// tap's weights lie in the same order as an output pixel's channels and every
// inner loop runs over contiguous channels, which the compiler vectorises.
// Threads split the batch (forward, backward data) or the channels (filter
// gradient, a sum over the batch that needs no partial sums so).
#pragma once
#include <cstdint>

#include "kernels/types.hpp"  // ConvGeometry

namespace drun::kernels::cpu {

// y = dwconv(x, w) + b; b may be null (no bias).
void depthwise_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                              float* y, int threads);
// dx overwritten.
void depthwise_conv2d_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                    float* dx, int threads);
// dw overwritten.
void depthwise_conv2d_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                      float* dw, int threads);

}  // namespace drun::kernels::cpu

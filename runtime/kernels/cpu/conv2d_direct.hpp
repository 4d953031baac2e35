// Direct 2-D convolution for kernels with few taps (K = KH*KW*C small, as in a
// network's first layer on 1-3 channel images). There im2col + GEMM spends its
// time packing K=9 panels; a direct loop vectorised over output channels, with
// the whole (K x CO) weight block in L1, does the same work in one pass.
// Layouts as in conv2d.hpp: x NHWC, w HWIO, y NHWC.
#pragma once
#include <cstdint>

#include "kernels/cpu/conv2d.hpp"
#include "kernels/types.hpp"  // PoolGeometry

namespace drun::kernels::cpu {

// Whether the direct kernels are the faster choice for this geometry.
bool conv2d_direct_suits(const ConvGeometry& g);

void conv2d_direct_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                           float* y, bool relu, int threads);

// Floats of workspace conv2d_direct_backward_filter needs: per thread, one
// image's taps (OH*OW*K) and its filter and bias partial sums (K*CO + CO).
int64_t conv2d_direct_workspace_floats(const ConvGeometry& g, int threads);

// dw, db overwritten. When relu_y is not null, dy is first masked by
// relu_y > 0 (the ReLU backward of the forward's output), fused in the pass.
void conv2d_direct_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                   const float* relu_y, float* dw, float* db, float* workspace,
                                   int threads);

// A network's first convolution followed by max pooling (the seed CNN, LeNet):
// both in one pass each way, without the convolution's output. Suits where
// the direct kernels do and the windows tile that output (stride = window,
// no padding), as pg describes it.
bool conv2d_direct_max_pool_suits(const ConvGeometry& g, const PoolGeometry& pg);

// y = max_pool(relu?(conv(x, w) + b)), argmax as max_pool_forward's.
void conv2d_direct_max_pool_forward(const ConvGeometry& g, const PoolGeometry& pg, const float* x,
                                    const float* w, const float* b, float* y, int32_t* argmax,
                                    bool relu, int threads);

// dw, db overwritten, from the pooled gradient dy; relu_y: the pooled output,
// when the forward applied a ReLU. Workspace as conv2d_direct_backward_filter's.
void conv2d_direct_max_pool_backward_filter(const ConvGeometry& g, const PoolGeometry& pg,
                                            const float* x, const float* dy, const int32_t* argmax,
                                            const float* relu_y, float* dw, float* db,
                                            float* workspace, int threads);

}  // namespace drun::kernels::cpu

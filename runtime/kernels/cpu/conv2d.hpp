// 2-D convolution on NHWC activations and HWIO kernels, as im2col + GEMM.
//   x  (N, H, W, C)      w  (KH, KW, C, CO)      b (CO)      y (N, OH, OW, CO)
// The im2col matrix of a chunk of images is (rows = n*OH*OW, K = KH*KW*C), so the
// HWIO kernel seen as a (K, CO) matrix multiplies it with no transpose. Images
// are processed in chunks that bound the workspace and give each thread its own.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"  // ConvGeometry, conv_geometry

namespace drun::kernels::cpu {

// Floats of workspace that conv2d_* need for `threads` threads.
int64_t conv2d_workspace_floats(const ConvGeometry& g, int threads);

// y = conv(x, w) + b, then ReLU when `relu` (fused while the chunk is in cache).
void conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y,
                    bool relu, float* workspace, int threads);

// dw = im2col(x)^T dz, db = column sums of dz (both overwritten), where dz is
// dy, or dy masked by relu_y > 0 when relu_y (the forward's ReLU output) is given.
void conv2d_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                            const float* relu_y, float* dw, float* db, float* workspace,
                            int threads);

// dx = col2im(dy w^T) (overwritten).
void conv2d_backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                          float* workspace, int threads);

// The im2col matrix of images [n0, n1): (n1-n0)*OH*OW rows of K values.
void im2col(const ConvGeometry& g, const float* x, int64_t n0, int64_t n1, float* col);
// Adds the columns back into images [n0, n1) of dx (dx must be zeroed first).
void col2im_add(const ConvGeometry& g, const float* col, int64_t n0, int64_t n1, float* dx);

// Filter-gradient partial sums of `parts` threads, each K*CO weights followed
// by CO biases, added into dw and db (overwritten).
void sum_filter_partials(const float* partial, int parts, int64_t k, int64_t co, float* dw,
                         float* db);

}  // namespace drun::kernels::cpu

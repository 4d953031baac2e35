// Convolution as im2col + OpenBLAS SGEMM, the engine for what the direct and
// implicit kernels do not take (1x1 stride-1 convolutions, whose input is
// already the GEMM operand; channel counts off the vector width; strided
// input gradients). The im2col matrix of a chunk of images is
// (rows = n*OH*OW, K = KH*KW*C), so the HWIO kernel seen as a (K, CO) matrix
// multiplies it with no transpose. Images are processed in chunks that bound
// the workspace and give each thread its own.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels::cpu {

int64_t conv2d_im2col_workspace_floats(const ConvGeometry& g, int threads);

// As conv2d_forward, conv2d_backward_filter and conv2d_backward_data (conv2d.hpp).
void conv2d_im2col_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                           float* y, bool relu, float* workspace, int threads);
void conv2d_im2col_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                   const float* relu_y, float* dw, float* db, float* workspace,
                                   int threads);
void conv2d_im2col_backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                                 float* workspace, int threads);

// The im2col matrix of images [n0, n1): (n1-n0)*OH*OW rows of K values.
void im2col(const ConvGeometry& g, const float* x, int64_t n0, int64_t n1, float* col);
// Adds the columns back into images [n0, n1) of dx (dx must be zeroed first).
void col2im_add(const ConvGeometry& g, const float* col, int64_t n0, int64_t n1, float* dx);

}  // namespace drun::kernels::cpu

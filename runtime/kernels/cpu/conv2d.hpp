// 2-D convolution on NHWC activations and HWIO kernels, each call handed to
// the engine that suits its geometry: direct kernels for few taps
// (conv2d_direct.hpp), Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions
// whose channels fit the vector width (conv2d_winograd.hpp), implicit GEMM
// for other such convolutions (conv2d_implicit.hpp), im2col + OpenBLAS SGEMM
// for the rest (conv2d_im2col.hpp).
//   x  (N, H, W, C)      w  (KH, KW, C, CO)      b (CO)      y (N, OH, OW, CO)
#pragma once
#include <cstdint>

#include "kernels/types.hpp"  // ConvGeometry, conv_geometry

namespace drun::kernels::cpu {

// Which engine runs the convolutions that drun's direct kernels do not:
// automatic = Winograd, then implicit GEMM, where they apply, im2col +
// OpenBLAS SGEMM elsewhere; implicit = the same without Winograd; im2col =
// always the last. DRUN_CONV=auto|implicit|im2col picks one (read once;
// UsageError for another name), so that the engines can be measured in one
// binary.
enum class ConvEngineChoice { automatic, implicit, im2col };
ConvEngineChoice conv_engine_choice();

// Floats of workspace that conv2d_* need for `threads` threads.
int64_t conv2d_workspace_floats(const ConvGeometry& g, int threads);

// y = conv(x, w) + b, then ReLU when `relu` (fused while the chunk is in cache).
void conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y,
                    bool relu, float* workspace, int threads);
// The same; where the engine is Winograd or implicit GEMM it also writes each image's
// moments of y (N, 2, CO: per-channel mean, then sum of squared deviations;
// the op's `moments`, op_list.hpp) and returns true. Other engines: false.
bool conv2d_forward_with_moments(const ConvGeometry& g, const float* x, const float* w,
                                 const float* b, float* y, bool relu, float* workspace, int threads,
                                 float* moments);

// dw = patches(x)^T dz, db = column sums of dz (both overwritten), where dz is
// dy, or dy masked by relu_y > 0 when relu_y (the forward's ReLU output) is given.
void conv2d_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                            const float* relu_y, float* dw, float* db, float* workspace,
                            int threads);

// dx = the input gradient (overwritten).
void conv2d_backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                          float* workspace, int threads);

// The input gradient of a stride-1 convolution as a forward convolution
// (the implicit and Winograd engines'): over dy (OH, OW, CO) padded by
// KH-1-pad_top rows and KW-1-pad_left columns, with the kernel flipped in
// both spatial axes and its channel axes swapped; its output is dx (H, W, C).
ConvGeometry input_gradient_geometry(const ConvGeometry& g);

// Filter-gradient partial sums of `parts` threads, each K*CO weights followed
// by CO biases, added in thread order into dw and db (overwritten), the
// elements split over `threads`.
void sum_filter_partials(const float* partial, int parts, int64_t k, int64_t co, float* dw,
                         float* db, int threads);

}  // namespace drun::kernels::cpu

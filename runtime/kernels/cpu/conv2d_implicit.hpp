// Convolutions as implicit GEMM (isa/conv_implicit_impl.hpp): the patch
// matrix that im2col would write (9x the input for a 3x3 kernel) is never
// written; the kernel reads each tap from the image where it lies, leaving
// out taps in the padding, and keeps a tile of outputs in registers. Only
// where a side has more than one padded column (a 5x5 "same" convolution)
// does a thread first copy each image into its own zero-bordered buffer.
// Input gradients of stride-1 convolutions are the forward of the flipped,
// transposed kernel over the output gradient padded by KH-1-pad.
// Layouts as in conv2d.hpp: x NHWC, w HWIO, y NHWC.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels::cpu {

// Whether the implicit kernels run this geometry's forward and filter
// gradient (output channels a multiple of the CPU's vector width).
bool conv2d_implicit_suits(const ConvGeometry& g);
// Whether they run its input gradient (also stride 1, input channels a
// multiple of the vector width).
bool conv2d_implicit_backward_data_suits(const ConvGeometry& g);

int64_t conv2d_implicit_workspace_floats(const ConvGeometry& g, int threads);

// moments: null, or (N, 2, CO) for each image's moments of y (conv2d.hpp),
// taken right after the image's output is written, while it is in cache.
void conv2d_implicit_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                             float* y, bool relu, float* workspace, int threads,
                             float* moments = nullptr);
// dw, db overwritten; dy masked by relu_y > 0 where relu_y is given.
void conv2d_implicit_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                     const float* relu_y, float* dw, float* db, float* workspace,
                                     int threads);
// dx overwritten.
void conv2d_implicit_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                   float* dx, float* workspace, int threads);

}  // namespace drun::kernels::cpu

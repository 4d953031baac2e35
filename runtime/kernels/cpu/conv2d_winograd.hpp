// 3x3 stride-1 convolutions by Winograd's minimal filtering F(2x2, 3x3)
// (Lavin and Gray, 2015): each 2x2 tile of outputs from a 4x4 window of
// inputs with 16 multiplications per input and output channel pair instead
// of 36, 2.25x fewer. Per tile and channel the window is transformed
// (V = B^T d B), multiplied elementwise with the transformed kernel
// (U = G g G^T), summed over input channels (16 GEMMs, one per element of the
// 4x4 transform), and transformed back (Y = A^T M A). The filter gradient is
// the same product transposed, summed over tiles in the transformed domain
// and brought back once per call (dg = G^T S G); the input gradient is the
// forward of the flipped, transposed kernel, as in conv2d_implicit.cpp.
// Each image's tiles go through in blocks whose transforms stay in cache
// (isa/conv_winograd_impl.hpp). The transforms' constants are 0, +-1 and
// +-1/2, so the results differ from direct convolution by rounding only.
// Layouts as in conv2d.hpp: x NHWC, w HWIO, y NHWC.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/types.hpp"
#ifndef BUDGET
#define BUDGET 2048
#endif

namespace drun::kernels::cpu {

// Whether Winograd runs this geometry: 3x3, stride 1, input and output
// channels multiples of the CPU's vector width, padding below the kernel.
bool conv2d_winograd_suits(const ConvGeometry& g);

int64_t conv2d_winograd_workspace_floats(const ConvGeometry& g, int threads);

// moments as conv2d_implicit_forward's.
void conv2d_winograd_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                             float* y, bool relu, float* workspace, int threads,
                             float* moments = nullptr);
// dw, db overwritten; dy masked by relu_y > 0 where relu_y is given.
void conv2d_winograd_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                     const float* relu_y, float* dw, float* db, float* workspace,
                                     int threads);
// dx overwritten.
void conv2d_winograd_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                   float* dx, float* workspace, int threads);

// The tile grid: 2x2 output pixels a tile, row-major.
inline int64_t winograd_tiles_wide(const ConvGeometry& g) {
  return (g.ow + 1) / 2;
}
inline int64_t winograd_tiles(const ConvGeometry& g) {
  return (g.oh + 1) / 2 * winograd_tiles_wide(g);
}
// Tiles transformed at a time (16 elements x tiles x (C + CO) floats): 64
// KiB for the forward, whose GEMMs read each element's rows once per block
// of output channels; 256 KiB for the filter gradient, whose accumulators
// are loaded and stored once per block. Both within L2.
inline int64_t winograd_block_tiles(const ConvGeometry& g, bool filter) {
  const int64_t budget = filter ? 4096 : 1024;
  return std::clamp<int64_t>(budget / (g.c + g.co), 1, std::max<int64_t>(1, winograd_tiles(g)));
}
// The distance between two elements' planes of a block's transform of
// `channels` channels: one cache line more than the plane, since planes a
// multiple of 4 KiB apart would map the 16 stores of a tile to the same
// cache sets.
inline int64_t winograd_plane_pitch(int64_t tiles, int64_t channels) {
  return tiles * channels + 16;
}
// A thread's buffer for one block's transforms.
inline int64_t winograd_block_floats(const ConvGeometry& g) {
  const int64_t block = std::max(winograd_block_tiles(g, false), winograd_block_tiles(g, true));
  return 16 * (winograd_plane_pitch(block, g.c) + winograd_plane_pitch(block, g.co));
}

}  // namespace drun::kernels::cpu

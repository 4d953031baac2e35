// 3x3 stride-1 convolutions by Winograd's minimal filtering F(m x m, 3x3)
// (Lavin and Gray, 2015), m = 2 or 4: each m x m tile of outputs from an
// (m+2) x (m+2) window of inputs with (m+2)^2 multiplications per input and
// output channel pair instead of 9 m^2: 16 instead of 36 (2.25x fewer) for
// F(2x2), 36 instead of 144 (4x) for F(4x4). Per tile and channel the window
// is transformed (V = B^T d B), multiplied elementwise with the transformed
// kernel (U = G g G^T), summed over input channels (one GEMM per element of
// the transform), and transformed back (Y = A^T M A). The filter gradient is
// the same product transposed, summed over tiles in the transformed domain
// and brought back once per call (dg = G^T S G); the input gradient is the
// forward of the flipped, transposed kernel, as in conv2d_implicit.cpp.
// Tiles go through in blocks whose transforms stay in cache
// (isa/conv_winograd_impl.hpp). F(2x2)'s constants are 0, +-1 and +-1/2, so
// its results differ from direct convolution by rounding only; F(4x4)'s
// reach 8 and 1/24 and lose about one decimal digit more (still within the
// tests' 1e-4 of the largest value).
// Layouts as in conv2d.hpp: x NHWC, w HWIO, y NHWC.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels::cpu {

// Whether Winograd runs this geometry: 3x3, stride 1, input and output
// channels multiples of the CPU's vector width, padding below the kernel.
bool conv2d_winograd_suits(const ConvGeometry& g);

// The output tile (2 or 4) conv2d_winograd_* use unless told (tile = 0
// below): DRUN_WINOGRAD_TILE=2|4 where set, else 4. Read once.
int conv2d_winograd_tile();

int64_t conv2d_winograd_workspace_floats(const ConvGeometry& g, int threads);

// moments as conv2d_implicit_forward's.
void conv2d_winograd_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                             float* y, bool relu, float* workspace, int threads,
                             float* moments = nullptr, int tile = 0);
// dw, db overwritten; dy masked by relu_y > 0 where relu_y is given.
void conv2d_winograd_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                     const float* relu_y, float* dw, float* db, float* workspace,
                                     int threads, int tile = 0);
// dx overwritten.
void conv2d_winograd_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                   float* dx, float* workspace, int threads, int tile = 0);

// The tile grid of one image: m x m output pixels a tile, row-major.
inline int64_t winograd_tiles_wide(const ConvGeometry& g, int m) {
  return (g.ow + m - 1) / m;
}
inline int64_t winograd_tiles(const ConvGeometry& g, int m) {
  return (g.oh + m - 1) / m * winograd_tiles_wide(g, m);
}
// Elements of a tile's transform.
constexpr int winograd_elements(int m) {
  return (m + 2) * (m + 2);
}
// Tiles transformed at a time (elements x tiles x (C + CO) floats): about
// 64 KiB for the forward, one image's tiles at most, whose GEMMs read each
// element's rows once per block of output channels; about 256 KiB for the
// filter gradient, whose accumulators are loaded and stored once per block,
// and whose blocks run on across the images of a thread.
inline int64_t winograd_block_tiles(const ConvGeometry& g, int m, bool filter) {
  const int64_t budget = (filter ? 65536 : 16384) / winograd_elements(m);
  const int64_t most = filter ? g.n * winograd_tiles(g, m) : winograd_tiles(g, m);
  // At least 8 tiles, so that the GEMMs have rows enough to hide FMA latency.
  return std::min(std::max<int64_t>(8, budget / (g.c + g.co)), std::max<int64_t>(1, most));
}
// The distance between two elements' planes of a block's transform of
// `channels` channels: one cache line more than the plane, since planes a
// multiple of 4 KiB apart would map a tile's stores to the same cache sets.
inline int64_t winograd_plane_pitch(int64_t tiles, int64_t channels) {
  return tiles * channels + 16;
}
// A thread's buffer for one block's transforms.
inline int64_t winograd_block_floats(const ConvGeometry& g, int m) {
  const int64_t block =
      std::max(winograd_block_tiles(g, m, false), winograd_block_tiles(g, m, true));
  return winograd_elements(m) *
         (winograd_plane_pitch(block, g.c) + winograd_plane_pitch(block, g.co));
}

}  // namespace drun::kernels::cpu

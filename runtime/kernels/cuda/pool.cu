// Pooling kernels (see pool.hpp). One thread per output element for the
// forward passes; the backward passes gather instead of scattering: each
// input element walks the windows that cover it in the CPU's (oy, ox) order,
// so overlapping windows add up in the same order, to the same bits, with no
// atomics. Products that feed a sum use __fmul_rn/__fadd_rn so that nvcc does
// not fuse them into an FMA the CPU build does not do.
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/pool.hpp"
#include "kernels/pool_window.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

__global__ void max_pool_forward_kernel(PoolGeometry g, const float* __restrict__ x,
                                        float* __restrict__ y, int32_t* __restrict__ argmax) {
  const int64_t c = g.c, total = g.n * g.oh * g.ow * c;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t ci = i % c, p = i / c, ox = p % g.ow, oy = (p / g.ow) % g.oh,
                  n = p / (g.ow * g.oh);
    const float* xn = x + n * g.h * g.w * c + ci;
    // Strict '>' in (ky, kx) order keeps the first maximum and skips NaNs,
    // as the CPU's branch-free select does; an all-NaN window keeps pixel 0.
    float best = -INFINITY;
    int32_t won = 0;
    const WindowSpan ys = window_rows(g, oy), xs = window_cols(g, ox);
    for (int64_t iy = ys.begin; iy < ys.end; ++iy)
      for (int64_t ix = xs.begin; ix < xs.end; ++ix) {
        const float v = xn[(iy * g.w + ix) * c];
        if (v > best) {
          best = v;
          won = static_cast<int32_t>(iy * g.w + ix);
        }
      }
    y[i] = best;
    argmax[i] = won;
  }
}

// `tiles` mirrors the CPU's fast path for stride == pool without padding: it
// copies the one window's gradient (keeping a -0.0f) rather than adding it
// to zero.
__global__ void max_pool_backward_kernel(PoolGeometry g, const float* __restrict__ dy,
                                         const int32_t* __restrict__ argmax, float* __restrict__ dx,
                                         bool tiles) {
  const int64_t c = g.c, total = g.n * g.h * g.w * c;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t ci = i % c, p = i / c, ix = p % g.w, iy = (p / g.w) % g.h, n = p / (g.w * g.h);
    const int32_t pix = static_cast<int32_t>(iy * g.w + ix);
    const WindowSpan ys = windows_over(iy, g.sh, g.pad_top, g.ph, g.oh);
    const WindowSpan xs = windows_over(ix, g.sw, g.pad_left, g.pw, g.ow);
    const int64_t base = n * g.oh * g.ow * c + ci;
    float acc = 0.0f;
    for (int64_t oy = ys.begin; oy < ys.end; ++oy)
      for (int64_t ox = xs.begin; ox < xs.end; ++ox) {
        const int64_t o = base + (oy * g.ow + ox) * c;
        if (argmax[o] != pix) continue;
        acc = tiles ? dy[o] : acc + dy[o];
      }
    dx[i] = acc;
  }
}

// A window with no value above -inf (all -inf or NaN) keeps argmax 0 even
// when pixel 0 lies outside it; the CPU's scatter still adds its gradient to
// pixel 0, which the gather above cannot see. Added here, after the gather
// (so only the rounding order of that degenerate sum can differ).
__global__ void max_pool_stray_kernel(PoolGeometry g, const float* __restrict__ dy,
                                      const int32_t* __restrict__ argmax, float* dx) {
  const int64_t c = g.c, total = g.n * g.oh * g.ow * c;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    if (argmax[i] != 0) continue;
    const int64_t ci = i % c, p = i / c, ox = p % g.ow, oy = (p / g.ow) % g.oh,
                  n = p / (g.ow * g.oh);
    const int64_t ys = oy * g.sh - g.pad_top, xs = ox * g.sw - g.pad_left;
    const bool holds_origin = ys <= 0 && ys + g.ph > 0 && xs <= 0 && xs + g.pw > 0;
    if (!holds_origin) atomicAdd(dx + n * g.h * g.w * c + ci, dy[i]);
  }
}

__global__ void avg_pool_forward_kernel(PoolGeometry g, const float* __restrict__ x,
                                        float* __restrict__ y) {
  const int64_t c = g.c, total = g.n * g.oh * g.ow * c;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t ci = i % c, p = i / c, ox = p % g.ow, oy = (p / g.ow) % g.oh,
                  n = p / (g.ow * g.oh);
    const float* xn = x + n * g.h * g.w * c + ci;
    float acc = 0.0f;
    const WindowSpan ys = window_rows(g, oy), xs = window_cols(g, ox);
    for (int64_t iy = ys.begin; iy < ys.end; ++iy)
      for (int64_t ix = xs.begin; ix < xs.end; ++ix) acc += xn[(iy * g.w + ix) * c];
    y[i] = acc * __fdiv_rn(1.0f, static_cast<float>(window_count(g, oy, ox)));
  }
}

__global__ void avg_pool_backward_kernel(PoolGeometry g, const float* __restrict__ dy,
                                         float* __restrict__ dx) {
  const int64_t c = g.c, total = g.n * g.h * g.w * c;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t ci = i % c, p = i / c, ix = p % g.w, iy = (p / g.w) % g.h, n = p / (g.w * g.h);
    const WindowSpan ys = windows_over(iy, g.sh, g.pad_top, g.ph, g.oh);
    const WindowSpan xs = windows_over(ix, g.sw, g.pad_left, g.pw, g.ow);
    const int64_t base = n * g.oh * g.ow * c + ci;
    float acc = 0.0f;
    for (int64_t oy = ys.begin; oy < ys.end; ++oy)
      for (int64_t ox = xs.begin; ox < xs.end; ++ox) {
        const float inv = __fdiv_rn(1.0f, static_cast<float>(window_count(g, oy, ox)));
        acc = __fadd_rn(acc, __fmul_rn(dy[base + (oy * g.ow + ox) * c], inv));
      }
    dx[i] = acc;
  }
}

// One thread per (image, channel) summing its pixels in order, as the CPU:
// neighbouring threads read neighbouring channels, and the sum is bit-equal.
__global__ void global_avg_pool_forward_kernel(int64_t n, int64_t hw, int64_t c,
                                               const float* __restrict__ x, float* __restrict__ y,
                                               float inv) {
  const int64_t total = n * c;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t ci = i % c, img = i / c;
    const float* xp = x + img * hw * c + ci;
    float acc = 0.0f;
    // Unrolled so that several loads are in flight (the order of the sum stays).
#pragma unroll 8
    for (int64_t p = 0; p < hw; ++p) acc += xp[p * c];
    y[i] = acc * inv;
  }
}

__global__ void global_avg_pool_backward_kernel(int64_t hw, int64_t c, int64_t total,
                                                const float* __restrict__ dy,
                                                float* __restrict__ dx, float inv) {
  for (int64_t i = first_index(); i < total; i += grid_stride())
    dx[i] = dy[(i / (hw * c)) * c + i % c] * inv;
}

}  // namespace

void max_pool_forward(const PoolGeometry& g, const float* x, float* y, int32_t* argmax) {
  const int64_t total = g.n * g.oh * g.ow * g.c;
  if (total == 0) return;
  max_pool_forward_kernel<<<blocks_for(total), kThreads>>>(g, x, y, argmax);
  check_launch("max_pool_forward");
}

void max_pool_backward(const PoolGeometry& g, const float* dy, const int32_t* argmax, float* dx) {
  const int64_t total = g.n * g.h * g.w * g.c;
  if (total == 0) return;
  // The CPU's test for windows that tile the input (each pixel in at most one).
  const bool tiles = g.sh == g.ph && g.sw == g.pw && g.pad_top == 0 && g.pad_left == 0;
  max_pool_backward_kernel<<<blocks_for(total), kThreads>>>(g, dy, argmax, dx, tiles);
  check_launch("max_pool_backward");
  // The CPU's tiling path compares argmax with the pixel, so it drops what
  // the scatter path would add to pixel 0: only the scatter path has strays.
  const int64_t outputs = g.n * g.oh * g.ow * g.c;
  if (tiles || outputs == 0) return;
  max_pool_stray_kernel<<<blocks_for(outputs), kThreads>>>(g, dy, argmax, dx);
  check_launch("max_pool_backward (stray argmax)");
}

void avg_pool_forward(const PoolGeometry& g, const float* x, float* y) {
  const int64_t total = g.n * g.oh * g.ow * g.c;
  if (total == 0) return;
  avg_pool_forward_kernel<<<blocks_for(total), kThreads>>>(g, x, y);
  check_launch("avg_pool_forward");
}

void avg_pool_backward(const PoolGeometry& g, const float* dy, float* dx) {
  const int64_t total = g.n * g.h * g.w * g.c;
  if (total == 0) return;
  avg_pool_backward_kernel<<<blocks_for(total), kThreads>>>(g, dy, dx);
  check_launch("avg_pool_backward");
}

void global_avg_pool_forward(int64_t n, int64_t hw, int64_t c, const float* x, float* y) {
  if (n * c == 0) return;
  const float inv = 1.0f / static_cast<float>(hw);
  global_avg_pool_forward_kernel<<<blocks_for(n * c), kThreads>>>(n, hw, c, x, y, inv);
  check_launch("global_avg_pool_forward");
}

void global_avg_pool_backward(int64_t n, int64_t hw, int64_t c, const float* dy, float* dx) {
  const int64_t total = n * hw * c;
  if (total == 0) return;
  const float inv = 1.0f / static_cast<float>(hw);
  global_avg_pool_backward_kernel<<<blocks_for(total), kThreads>>>(hw, c, total, dy, dx, inv);
  check_launch("global_avg_pool_backward");
}

}  // namespace drun::kernels::cuda

// Depthwise convolution kernels (see depthwise_conv.hpp). Plain kernels
// rather than cuDNN's grouped convolution: that would want the filter in
// (CO, KH, KW, 1) and a transpose each way, for work that is a few
// multiply-adds per output. One thread per output element forward; the data
// gradient gathers, one thread per input element walking the windows that
// cover it (no atomics); the filter gradient is one block per weight, summing
// over the batch's output pixels.
#include <cuda_runtime.h>

#include "kernels/cuda/depthwise_conv.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/pool_window.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

__global__ void forward_kernel(ConvGeometry g, const float* __restrict__ x,
                               const float* __restrict__ w, const float* __restrict__ b,
                               float* __restrict__ y) {
  const int64_t co = g.co, m = g.co / g.c, total = g.n * g.oh * g.ow * co;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t o = i % co, p = i / co, ox = p % g.ow, oy = (p / g.ow) % g.oh,
                  n = p / (g.ow * g.oh);
    const float* xn = x + n * g.h * g.w * g.c + o / m;
    const WindowSpan ys = window_inputs(oy, g.sh, g.pad_top, g.kh, g.h);
    const WindowSpan xs = window_inputs(ox, g.sw, g.pad_left, g.kw, g.w);
    const int64_t iy0 = oy * g.sh - g.pad_top, ix0 = ox * g.sw - g.pad_left;
    float acc = b ? b[o] : 0.0f;
    for (int64_t iy = ys.begin; iy < ys.end; ++iy)
      for (int64_t ix = xs.begin; ix < xs.end; ++ix)
        acc += xn[(iy * g.w + ix) * g.c] * w[((iy - iy0) * g.kw + ix - ix0) * co + o];
    y[i] = acc;
  }
}

__global__ void backward_data_kernel(ConvGeometry g, const float* __restrict__ dy,
                                     const float* __restrict__ w, float* __restrict__ dx) {
  const int64_t c = g.c, co = g.co, m = g.co / g.c, total = g.n * g.h * g.w * c;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t ci = i % c, p = i / c, ix = p % g.w, iy = (p / g.w) % g.h, n = p / (g.w * g.h);
    const WindowSpan ys = windows_over(iy, g.sh, g.pad_top, g.kh, g.oh);
    const WindowSpan xs = windows_over(ix, g.sw, g.pad_left, g.kw, g.ow);
    const float* dyn = dy + n * g.oh * g.ow * co + ci * m;
    float acc = 0.0f;
    for (int64_t oy = ys.begin; oy < ys.end; ++oy)
      for (int64_t ox = xs.begin; ox < xs.end; ++ox) {
        const int64_t ky = iy - (oy * g.sh - g.pad_top), kx = ix - (ox * g.sw - g.pad_left);
        const float* d = dyn + (oy * g.ow + ox) * co;
        const float* wt = w + (ky * g.kw + kx) * co + ci * m;
        for (int64_t j = 0; j < m; ++j) acc += d[j] * wt[j];
      }
    dx[i] = acc;
  }
}

// Block e sums weight e's gradient (tap e / co, output channel e % co) over
// every output pixel of the batch whose window has that tap inside the image.
__global__ void backward_filter_kernel(ConvGeometry g, const float* __restrict__ x,
                                       const float* __restrict__ dy, float* __restrict__ dw) {
  const int64_t e = blockIdx.x, co = g.co, o = e % co, tap = e / co;
  const int64_t ky = tap / g.kw, kx = tap % g.kw, ci = o / (g.co / g.c);
  const int64_t pixels = g.n * g.oh * g.ow;
  double acc = 0.0;
  for (int64_t p = threadIdx.x; p < pixels; p += blockDim.x) {
    const int64_t ox = p % g.ow, oy = (p / g.ow) % g.oh, n = p / (g.ow * g.oh);
    const int64_t iy = oy * g.sh - g.pad_top + ky, ix = ox * g.sw - g.pad_left + kx;
    if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
    acc += static_cast<double>(x[((n * g.h + iy) * g.w + ix) * g.c + ci]) * dy[p * co + o];
  }
  const double total = block_sum(acc);
  if (threadIdx.x == 0) dw[e] = static_cast<float>(total);
}

}  // namespace

void depthwise_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                              float* y) {
  forward_kernel<<<blocks_for(g.n * g.oh * g.ow * g.co), kThreads>>>(g, x, w, b, y);
  check_launch("depthwise_conv2d_forward");
}

void depthwise_conv2d_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                    float* dx) {
  backward_data_kernel<<<blocks_for(g.n * g.h * g.w * g.c), kThreads>>>(g, dy, w, dx);
  check_launch("depthwise_conv2d_backward_data");
}

void depthwise_conv2d_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                      float* dw) {
  const int64_t weights = g.kh * g.kw * g.co;
  if (weights == 0) return;
  backward_filter_kernel<<<static_cast<unsigned>(weights), kThreads>>>(g, x, dy, dw);
  check_launch("depthwise_conv2d_backward_filter");
}

}  // namespace drun::kernels::cuda

#include "kernels/cpu/depthwise_conv2d.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/split.hpp"

namespace drun::kernels::cpu {

namespace {

// The taps [begin, end) of a window along one axis that fall inside the
// image, for output position o: padding contributes nothing, so it is skipped
// rather than read.
struct Taps {
  int64_t begin, end;
};
Taps taps(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t size) {
  const int64_t first = o * stride - pad;
  return {std::max<int64_t>(0, -first), std::min(k, size - first)};
}

// y[ci * m + j] += x[ci] * w[ci * m + j] over c channels: a tap of the
// forward pass (w the tap's weights) and of the filter gradient (w the
// output gradient, y the tap's gradient). m == 1, MobileNet's case, is
// written apart so that it is one plain multiply-add over three rows.
inline void spread_mul_add(const float* __restrict x, const float* __restrict w,
                           float* __restrict y, int64_t c, int64_t m) {
  if (m == 1) {
    for (int64_t ci = 0; ci < c; ++ci) y[ci] += x[ci] * w[ci];
    return;
  }
  for (int64_t ci = 0; ci < c; ++ci) {
    const float v = x[ci];
    for (int64_t j = 0; j < m; ++j) y[ci * m + j] += v * w[ci * m + j];
  }
}

// dx[ci] += sum over j of dy[ci * m + j] * w[ci * m + j]: a tap of the data gradient.
inline void gather_mul_add(const float* __restrict dy, const float* __restrict w,
                           float* __restrict dx, int64_t c, int64_t m) {
  if (m == 1) {
    for (int64_t ci = 0; ci < c; ++ci) dx[ci] += dy[ci] * w[ci];
    return;
  }
  for (int64_t ci = 0; ci < c; ++ci) {
    float s = 0.0f;
    for (int64_t j = 0; j < m; ++j) s += dy[ci * m + j] * w[ci * m + j];
    dx[ci] += s;
  }
}

// Calls f(pixel of x, tap index ky * kw + kx, pixel of y) for every tap of
// every output pixel of image n, in (oy, ox, ky, kx) order; pixels as offsets
// in floats from the image's start (x's c, y's co per pixel).
template <class F>
void for_each_tap(const ConvGeometry& g, F&& f) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const Taps ys = taps(oy, g.sh, g.pad_top, g.kh, g.h);
    const int64_t iy0 = oy * g.sh - g.pad_top;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const Taps xs = taps(ox, g.sw, g.pad_left, g.kw, g.w);
      const int64_t ix0 = ox * g.sw - g.pad_left, out = (oy * g.ow + ox) * g.co;
      for (int64_t ky = ys.begin; ky < ys.end; ++ky)
        for (int64_t kx = xs.begin; kx < xs.end; ++kx)
          f(((iy0 + ky) * g.w + ix0 + kx) * g.c, ky * g.kw + kx, out);
    }
  }
}

}  // namespace

void depthwise_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                              float* y, int threads) {
  const int64_t m = g.co / g.c, in_image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.co;
  for_each_range(g.n, threads, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const float* xn = x + n * in_image;
      float* yn = y + n * out_image;
      for (int64_t p = 0; p < g.oh * g.ow; ++p) {
        float* yp = yn + p * g.co;
        if (b)
          std::copy_n(b, g.co, yp);
        else
          std::fill_n(yp, g.co, 0.0f);
      }
      for_each_tap(g, [&](int64_t in, int64_t tap, int64_t out) {
        spread_mul_add(xn + in, w + tap * g.co, yn + out, g.c, m);
      });
    }
  });
}

void depthwise_conv2d_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                    float* dx, int threads) {
  const int64_t m = g.co / g.c, in_image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.co;
  for_each_range(g.n, threads, [&](int64_t, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      float* dxn = dx + n * in_image;
      const float* dyn = dy + n * out_image;
      std::memset(dxn, 0, sizeof(float) * in_image);
      for_each_tap(g, [&](int64_t in, int64_t tap, int64_t out) {
        gather_mul_add(dyn + out, w + tap * g.co, dxn + in, g.c, m);
      });
    }
  });
}

void depthwise_conv2d_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                      float* dw, int threads) {
  const int64_t m = g.co / g.c, in_image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.co;
  // Each thread owns the channels [c0, c1) of every tap, and sums them over
  // the whole batch.
  for_each_range(g.c, threads, [&](int64_t, int64_t c0, int64_t c1) {
    const int64_t c = c1 - c0;
    for (int64_t tap = 0; tap < g.kh * g.kw; ++tap)
      std::fill_n(dw + tap * g.co + c0 * m, c * m, 0.0f);
    for (int64_t n = 0; n < g.n; ++n) {
      const float* xn = x + n * in_image + c0;
      const float* dyn = dy + n * out_image + c0 * m;
      for_each_tap(g, [&](int64_t in, int64_t tap, int64_t out) {
        spread_mul_add(xn + in, dyn + out, dw + tap * g.co + c0 * m, c, m);
      });
    }
  });
}

}  // namespace drun::kernels::cpu

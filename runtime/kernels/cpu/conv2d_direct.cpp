#include "kernels/cpu/conv2d_direct.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace drun::kernels::cpu {

namespace {

constexpr int64_t kMaxTaps = 32;

// The K input values under one output pixel's kernel window (0 in padding),
// in HWIO tap order.
inline void gather_taps(const ConvGeometry& g, const float* xn, int64_t oy, int64_t ox,
                        float* taps) {
  const int64_t c = g.c, row = g.kw * c;
  const int64_t iy0 = oy * g.sh - g.pad_top, ix0 = ox * g.sw - g.pad_left;
  if (iy0 >= 0 && ix0 >= 0 && iy0 + g.kh <= g.h && ix0 + g.kw <= g.w) {
    // Inside the image: each kernel row is kw*c contiguous floats of x.
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const float* src = xn + ((iy0 + ky) * g.w + ix0) * c;
      for (int64_t i = 0; i < row; ++i) taps[ky * row + i] = src[i];
    }
    return;
  }
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t iy = iy0 + ky;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t ix = ix0 + kx;
      float* t = taps + (ky * g.kw + kx) * c;
      if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {
        for (int64_t ci = 0; ci < c; ++ci) t[ci] = 0.0f;
      } else {
        const float* xp = xn + (iy * g.w + ix) * c;
        for (int64_t ci = 0; ci < c; ++ci) t[ci] = xp[ci];
      }
    }
  }
}

// 16 floats: GCC's generic vectors lower to AVX-512, AVX2 or VSX as the target
// has them. Accumulators held in such variables stay in registers across the
// tap loop, which plain float arrays did not (they round-tripped the stack).
typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4)));

inline v16 load(const float* p) {
  return *reinterpret_cast<const v16u*>(p);
}
inline void store(float* p, v16 v) {
  *reinterpret_cast<v16u*>(p) = v;
}

// NV = CO / 16 known at compile time; NV = 0 is the generic scalar version.
// Four output pixels are computed together: each FMA chain is only as long as
// the kernel has taps, and four of them in flight hide the FMA latency.
template <int NV>
void forward_images(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y,
                    bool relu, int64_t n0, int64_t n1) {
  constexpr int P = 4;
  const int64_t co = g.co, k = g.k();
  float taps[P][kMaxTaps];
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      int64_t ox = 0;
      if constexpr (NV > 0) {
        const v16 zero = {};
        for (; ox + P <= g.ow; ox += P) {
          for (int p = 0; p < P; ++p) gather_taps(g, xn, oy, ox + p, taps[p]);
          v16 acc[P][NV];
          for (int p = 0; p < P; ++p)
            for (int v = 0; v < NV; ++v) acc[p][v] = load(b + 16 * v);
          for (int64_t t = 0; t < k; ++t) {
            const float* wr = w + t * co;
            for (int v = 0; v < NV; ++v) {
              const v16 wv = load(wr + 16 * v);
              for (int p = 0; p < P; ++p) acc[p][v] += taps[p][t] * wv;
            }
          }
          float* yo = y + ((n * g.oh + oy) * g.ow + ox) * co;
          for (int p = 0; p < P; ++p)
            for (int v = 0; v < NV; ++v)
              store(yo + p * co + 16 * v, relu ? (acc[p][v] > zero ? acc[p][v] : zero) : acc[p][v]);
        }
      }
      for (; ox < g.ow; ++ox) {  // the remainder, and every pixel for odd channel counts
        gather_taps(g, xn, oy, ox, taps[0]);
        float* yo = y + ((n * g.oh + oy) * g.ow + ox) * co;
        for (int64_t j = 0; j < co; ++j) yo[j] = b[j];
        for (int64_t t = 0; t < k; ++t)
          for (int64_t j = 0; j < co; ++j) yo[j] += taps[0][t] * w[t * co + j];
        if (relu)
          for (int64_t j = 0; j < co; ++j) yo[j] = std::max(0.0f, yo[j]);
      }
    }
  }
}

// The filter gradient of images [n0, n1), one pixel at a time (any K and CO).
template <int NV>
void backward_filter_images(const ConvGeometry& g, const float* x, const float* dy,
                            const float* relu_y, float* __restrict dw, float* __restrict db,
                            int64_t n0, int64_t n1) {
  const int64_t co = g.co, k = g.k();
  float taps[kMaxTaps];
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t o = ((n * g.oh + oy) * g.ow + ox) * co;
        gather_taps(g, xn, oy, ox, taps);
        if constexpr (NV > 0) {
          const v16 zero = {};
          for (int v = 0; v < NV; ++v) {
            v16 dz = load(dy + o + 16 * v);
            if (relu_y) dz = load(relu_y + o + 16 * v) > zero ? dz : zero;
            store(db + 16 * v, load(db + 16 * v) + dz);
            for (int64_t t = 0; t < k; ++t) {
              float* wr = dw + t * co + 16 * v;
              store(wr, load(wr) + taps[t] * dz);
            }
          }
        } else {
          for (int64_t j = 0; j < co; ++j) {
            const float dz = !relu_y || relu_y[o + j] > 0.0f ? dy[o + j] : 0.0f;
            db[j] += dz;
            for (int64_t t = 0; t < k; ++t) dw[t * co + j] += taps[t] * dz;
          }
        }
      }
    }
  }
}

// 3x3 kernels on one channel (K = 9), CO = 16 * NV: the image's taps are
// gathered first, then one tight loop over its pixels keeps all 9 x CO sums
// in registers (18 for CO = 32), so it runs at FMA throughput.
template <int NV>
void backward_filter_9taps(const ConvGeometry& g, const float* x, const float* dy,
                           const float* relu_y, float* __restrict dw, float* __restrict db,
                           float* __restrict taps, int64_t n0, int64_t n1) {
  constexpr int K = 9, CO = 16 * NV;
  const int64_t pixels = g.out_pixels();
  const v16 zero = {};
  v16 acc[K][NV], bacc[NV];
  for (int v = 0; v < NV; ++v) {
    bacc[v] = zero;
    for (int t = 0; t < K; ++t) acc[t][v] = zero;
  }
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) gather_taps(g, xn, oy, ox, taps + (oy * g.ow + ox) * K);
    const float* dyn = dy + n * pixels * CO;
    const float* yn = relu_y ? relu_y + n * pixels * CO : nullptr;
    for (int64_t p = 0; p < pixels; ++p) {
      v16 dz[NV];
      for (int v = 0; v < NV; ++v) {
        dz[v] = load(dyn + p * CO + 16 * v);
        if (yn) dz[v] = load(yn + p * CO + 16 * v) > zero ? dz[v] : zero;
        bacc[v] += dz[v];
      }
      const float* tp = taps + p * K;
      for (int t = 0; t < K; ++t)
        for (int v = 0; v < NV; ++v) acc[t][v] += tp[t] * dz[v];
    }
  }
  for (int v = 0; v < NV; ++v) {
    store(db + 16 * v, load(db + 16 * v) + bacc[v]);
    for (int t = 0; t < K; ++t) store(dw + t * CO + 16 * v, load(dw + t * CO + 16 * v) + acc[t][v]);
  }
}

template <class F16, class F32, class F64, class F>
void by_channels(int64_t co, F16 f16, F32 f32, F64 f64, F generic) {
  switch (co) {
    case 16:
      return f16();
    case 32:
      return f32();
    case 64:
      return f64();
    default:
      return generic();
  }
}

}  // namespace

bool conv2d_direct_suits(const ConvGeometry& g) {
  return g.k() <= kMaxTaps && g.co <= 256;
}

void conv2d_direct_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                           float* y, bool relu, int threads) {
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, g.n)));
#pragma omp parallel num_threads(parts)
  {
    const int64_t t = omp_get_thread_num(), per = (g.n + parts - 1) / parts;
    const int64_t n0 = std::min(g.n, t * per), n1 = std::min(g.n, n0 + per);
    by_channels(
        g.co, [&] { forward_images<1>(g, x, w, b, y, relu, n0, n1); },
        [&] { forward_images<2>(g, x, w, b, y, relu, n0, n1); },
        [&] { forward_images<4>(g, x, w, b, y, relu, n0, n1); },
        [&] { forward_images<0>(g, x, w, b, y, relu, n0, n1); });
  }
}

void conv2d_direct_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                   const float* relu_y, float* dw, float* db, float* partial,
                                   float* scratch, int64_t scratch_stride, int threads) {
  const int64_t co = g.co, k = g.k();
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, g.n)));
#pragma omp parallel num_threads(parts)
  {
    const int64_t t = omp_get_thread_num(), per = (g.n + parts - 1) / parts;
    const int64_t n0 = std::min(g.n, t * per), n1 = std::min(g.n, n0 + per);
    float* dwt = partial + t * (k * co + co);
    float* dbt = dwt + k * co;
    std::memset(dwt, 0, sizeof(float) * (k * co + co));
    float* taps = scratch + t * scratch_stride;
    if (k == 9 && co == 32)
      backward_filter_9taps<2>(g, x, dy, relu_y, dwt, dbt, taps, n0, n1);
    else if (k == 9 && co == 16)
      backward_filter_9taps<1>(g, x, dy, relu_y, dwt, dbt, taps, n0, n1);
    else
      by_channels(
          co, [&] { backward_filter_images<1>(g, x, dy, relu_y, dwt, dbt, n0, n1); },
          [&] { backward_filter_images<2>(g, x, dy, relu_y, dwt, dbt, n0, n1); },
          [&] { backward_filter_images<4>(g, x, dy, relu_y, dwt, dbt, n0, n1); },
          [&] { backward_filter_images<0>(g, x, dy, relu_y, dwt, dbt, n0, n1); });
  }
  sum_filter_partials(partial, parts, k, co, dw, db);
}

}  // namespace drun::kernels::cpu

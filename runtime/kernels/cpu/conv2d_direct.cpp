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

// The filter gradient of pixels [.., ..) with the (K x CO) sums held in
// registers when K is known at compile time (KT > 0: 3x3 on one channel).
template <int NV, int KT>
void backward_filter_images(const ConvGeometry& g, const float* x, const float* dy,
                            const float* relu_y, float* __restrict dw, float* __restrict db,
                            int64_t n0, int64_t n1) {
  const int64_t co = g.co, k = KT ? KT : g.k();
  float taps[kMaxTaps];
  constexpr int KR = KT ? KT : 1;
  v16 acc[KR][NV ? NV : 1] = {};
  v16 bacc[NV ? NV : 1] = {};
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t o = ((n * g.oh + oy) * g.ow + ox) * co;
        if constexpr (NV > 0) {
          v16 dz[NV];
          const v16 zero = {};
          v16 any = zero;
          for (int v = 0; v < NV; ++v) {
            dz[v] = load(dy + o + 16 * v);
            if (relu_y) dz[v] = load(relu_y + o + 16 * v) > zero ? dz[v] : zero;
            any = any != zero ? any : dz[v];
          }
          bool nonzero = false;
          for (int l = 0; l < 16; ++l) nonzero |= any[l] != 0.0f;
          if (!nonzero) continue;  // after max-pool many pixels get no gradient at all
          gather_taps(g, xn, oy, ox, taps);
          for (int v = 0; v < NV; ++v) bacc[v] += dz[v];
          if constexpr (KT > 0) {
            for (int t = 0; t < KT; ++t)
              for (int v = 0; v < NV; ++v) acc[t][v] += taps[t] * dz[v];
          } else {
            for (int64_t t = 0; t < k; ++t) {
              float* wr = dw + t * co;
              for (int v = 0; v < NV; ++v) store(wr + 16 * v, load(wr + 16 * v) + taps[t] * dz[v]);
            }
          }
        } else {
          float dz[256];
          for (int64_t j = 0; j < co; ++j)
            dz[j] = !relu_y || relu_y[o + j] > 0.0f ? dy[o + j] : 0.0f;
          gather_taps(g, xn, oy, ox, taps);
          for (int64_t j = 0; j < co; ++j) db[j] += dz[j];
          for (int64_t t = 0; t < k; ++t)
            for (int64_t j = 0; j < co; ++j) dw[t * co + j] += taps[t] * dz[j];
        }
      }
    }
  }
  if constexpr (NV > 0) {
    for (int v = 0; v < NV; ++v) store(db + 16 * v, load(db + 16 * v) + bacc[v]);
    if constexpr (KT > 0)
      for (int t = 0; t < KT; ++t)
        for (int v = 0; v < NV; ++v)
          store(dw + t * co + 16 * v, load(dw + t * co + 16 * v) + acc[t][v]);
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
                                   int threads) {
  const int64_t co = g.co, k = g.k();
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, g.n)));
#pragma omp parallel num_threads(parts)
  {
    const int64_t t = omp_get_thread_num(), per = (g.n + parts - 1) / parts;
    const int64_t n0 = std::min(g.n, t * per), n1 = std::min(g.n, n0 + per);
    float* dwt = partial + t * (k * co + co);
    float* dbt = dwt + k * co;
    std::memset(dwt, 0, sizeof(float) * (k * co + co));
    if (k == 9 && co == 32)
      backward_filter_images<2, 9>(g, x, dy, relu_y, dwt, dbt, n0, n1);
    else if (k == 9 && co == 16)
      backward_filter_images<1, 9>(g, x, dy, relu_y, dwt, dbt, n0, n1);
    else
      by_channels(
          co, [&] { backward_filter_images<1, 0>(g, x, dy, relu_y, dwt, dbt, n0, n1); },
          [&] { backward_filter_images<2, 0>(g, x, dy, relu_y, dwt, dbt, n0, n1); },
          [&] { backward_filter_images<4, 0>(g, x, dy, relu_y, dwt, dbt, n0, n1); },
          [&] { backward_filter_images<0, 0>(g, x, dy, relu_y, dwt, dbt, n0, n1); });
  }
  sum_filter_partials(partial, parts, k, co, dw, db);
}

}  // namespace drun::kernels::cpu

// Plain reference loops in double precision for the CPU kernels, and the
// comparison every kernel test makes: shared by kernels_test (the kernels as
// the process runs them) and cpu_variants_test (each ISA variant).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/rng.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/pool.hpp"

namespace drun::kernels::cpu::reference {

inline std::vector<float> random_vec(int64_t n, Rng& rng, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

// Max |got - want| must stay within rel * max(1, max |want|).
template <typename W>
void expect_close(const std::vector<float>& got, const std::vector<W>& want, double rel = 1e-4,
                  const char* what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  double diff = 0.0, scale = 1.0;
  size_t worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    if (!(d <= diff)) {  // also catches NaN
      diff = d;
      worst = i;
    }
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  EXPECT_LE(diff, rel * scale) << what << ": worst index " << worst << " got " << got[worst]
                               << " want " << want[worst];
}

inline std::vector<double> ref_conv_forward(const ConvGeometry& g, const std::vector<float>& x,
                                            const std::vector<float>& w,
                                            const std::vector<float>& b, bool relu) {
  std::vector<double> y(static_cast<size_t>(g.n * g.oh * g.ow * g.co));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t co = 0; co < g.co; ++co) {
          double acc = b[co];
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t iy = oy * g.sh + ky - g.pad_top, ix = ox * g.sw + kx - g.pad_left;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              for (int64_t ci = 0; ci < g.c; ++ci)
                acc += static_cast<double>(x[((n * g.h + iy) * g.w + ix) * g.c + ci]) *
                       w[((ky * g.kw + kx) * g.c + ci) * g.co + co];
            }
          y[((n * g.oh + oy) * g.ow + ox) * g.co + co] = relu ? std::max(0.0, acc) : acc;
        }
  return y;
}

// dw[ky,kx,ci,co] = sum x[...] dz[n,oy,ox,co]; db = sum dz; dx the transpose into x.
inline void ref_conv_backward(const ConvGeometry& g, const std::vector<float>& x,
                              const std::vector<float>& dz, const std::vector<float>& w,
                              std::vector<double>& dw, std::vector<double>& db,
                              std::vector<double>& dx) {
  dw.assign(static_cast<size_t>(g.k() * g.co), 0.0);
  db.assign(static_cast<size_t>(g.co), 0.0);
  dx.assign(static_cast<size_t>(g.n * g.h * g.w * g.c), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t co = 0; co < g.co; ++co) {
          const double d = dz[((n * g.oh + oy) * g.ow + ox) * g.co + co];
          db[co] += d;
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t iy = oy * g.sh + ky - g.pad_top, ix = ox * g.sw + kx - g.pad_left;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              for (int64_t ci = 0; ci < g.c; ++ci) {
                const int64_t xi = ((n * g.h + iy) * g.w + ix) * g.c + ci;
                const int64_t wi = ((ky * g.kw + kx) * g.c + ci) * g.co + co;
                dw[wi] += static_cast<double>(x[xi]) * d;
                dx[xi] += static_cast<double>(w[wi]) * d;
              }
            }
        }
}

struct PoolRef {
  std::vector<double> y;
  std::vector<double> dx;
};

inline PoolRef ref_pool(const PoolGeometry& g, const std::vector<float>& x,
                        const std::vector<float>& dy, bool max) {
  PoolRef r;
  r.y.assign(static_cast<size_t>(g.n * g.oh * g.ow * g.c), 0.0);
  r.dx.assign(static_cast<size_t>(g.n * g.h * g.w * g.c), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t c = 0; c < g.c; ++c) {
          const int64_t o = ((n * g.oh + oy) * g.ow + ox) * g.c + c;
          double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
          int64_t best_i = -1, count = 0;
          std::vector<int64_t> inside;
          for (int64_t ky = 0; ky < g.ph; ++ky)
            for (int64_t kx = 0; kx < g.pw; ++kx) {
              const int64_t iy = oy * g.sh + ky - g.pad_top, ix = ox * g.sw + kx - g.pad_left;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              const int64_t xi = ((n * g.h + iy) * g.w + ix) * g.c + c;
              inside.push_back(xi);
              sum += x[xi];
              ++count;
              if (x[xi] > best) {
                best = x[xi];
                best_i = xi;
              }
            }
          if (max) {
            r.y[o] = best;
            r.dx[best_i] += dy[o];
          } else {
            r.y[o] = sum / static_cast<double>(count);
            for (int64_t xi : inside) r.dx[xi] += dy[o] / static_cast<double>(count);
          }
        }
  return r;
}

}  // namespace drun::kernels::cpu::reference

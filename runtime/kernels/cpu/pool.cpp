#include "kernels/cpu/pool.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"
#include "kernels/pool_window.hpp"

namespace drun::kernels::cpu {

// Max pooling runs the CPU's kernel variant (cpu_kernels.hpp).
void max_pool_forward(const PoolGeometry& g, const float* x, float* y, int32_t* argmax,
                      int threads) {
  const CpuKernels& kernels = cpu_kernels();
  for_each_range(g.n, threads, [&](int64_t, int64_t n0, int64_t n1) {
    kernels.max_pool_forward(g, x, y, argmax, n0, n1);
  });
}

void max_pool_backward(const PoolGeometry& g, const float* dy, const int32_t* argmax, float* dx,
                       int threads) {
  const CpuKernels& kernels = cpu_kernels();
  for_each_range(g.n, threads, [&](int64_t, int64_t n0, int64_t n1) {
    kernels.max_pool_backward(g, dy, argmax, dx, n0, n1);
  });
}

void avg_pool_forward(const PoolGeometry& g, const float* x, float* y, int threads) {
  const int64_t c = g.c;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t n = 0; n < g.n; ++n) {
    const float* xn = x + n * g.h * g.w * c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        float* yo = y + ((n * g.oh + oy) * g.ow + ox) * c;
        for (int64_t ci = 0; ci < c; ++ci) yo[ci] = 0.0f;
        const WindowSpan ys = window_rows(g, oy), xs = window_cols(g, ox);
        for (int64_t iy = ys.begin; iy < ys.end; ++iy)
          for (int64_t ix = xs.begin; ix < xs.end; ++ix) {
            const float* xp = xn + (iy * g.w + ix) * c;
            for (int64_t ci = 0; ci < c; ++ci) yo[ci] += xp[ci];
          }
        const float inv = 1.0f / static_cast<float>(window_count(g, oy, ox));
        for (int64_t ci = 0; ci < c; ++ci) yo[ci] *= inv;
      }
    }
  }
}

void avg_pool_backward(const PoolGeometry& g, const float* dy, float* dx, int threads) {
  const int64_t c = g.c;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t n = 0; n < g.n; ++n) {
    float* dxn = dx + n * g.h * g.w * c;
    std::memset(dxn, 0, sizeof(float) * g.h * g.w * c);
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const float* d = dy + ((n * g.oh + oy) * g.ow + ox) * c;
        const float inv = 1.0f / static_cast<float>(window_count(g, oy, ox));
        const WindowSpan ys = window_rows(g, oy), xs = window_cols(g, ox);
        for (int64_t iy = ys.begin; iy < ys.end; ++iy)
          for (int64_t ix = xs.begin; ix < xs.end; ++ix) {
            float* dp = dxn + (iy * g.w + ix) * c;
            for (int64_t ci = 0; ci < c; ++ci) dp[ci] += d[ci] * inv;
          }
      }
    }
  }
}

void global_avg_pool_forward(int64_t n, int64_t hw, int64_t c, const float* x, float* y) {
  const float inv = 1.0f / static_cast<float>(hw);
  for (int64_t i = 0; i < n; ++i) {
    float* yi = y + i * c;
    for (int64_t ci = 0; ci < c; ++ci) yi[ci] = 0.0f;
    for (int64_t p = 0; p < hw; ++p) {
      const float* xp = x + (i * hw + p) * c;
      for (int64_t ci = 0; ci < c; ++ci) yi[ci] += xp[ci];
    }
    for (int64_t ci = 0; ci < c; ++ci) yi[ci] *= inv;
  }
}

void global_avg_pool_backward(int64_t n, int64_t hw, int64_t c, const float* dy, float* dx) {
  const float inv = 1.0f / static_cast<float>(hw);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t ci = 0; ci < c; ++ci) dx[(i * hw + p) * c + ci] = dy[i * c + ci] * inv;
}

}  // namespace drun::kernels::cpu

#include "kernels/cpu/conv2d_im2col.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/gemm.hpp"

namespace drun::kernels::cpu {

namespace {

// Whole images per chunk: at most about 2 MiB of im2col workspace, and at
// least one chunk per thread.
int64_t images_per_chunk(const ConvGeometry& g, int threads) {
  const int64_t per_image = std::max<int64_t>(1, g.out_pixels() * g.k());
  const int64_t by_memory = std::max<int64_t>(1, (int64_t{1} << 19) / per_image);
  const int64_t by_threads = std::max<int64_t>(1, (g.n + threads - 1) / std::max(1, threads));
  return std::min(by_memory, by_threads);
}

int64_t chunk_count(const ConvGeometry& g, int threads) {
  const int64_t per = images_per_chunk(g, threads);
  return (g.n + per - 1) / per;
}

int64_t chunk_floats(const ConvGeometry& g, int threads) {
  return images_per_chunk(g, threads) * g.out_pixels() * g.k();
}

// 1x1 stride-1 unpadded convolutions need no im2col: x is already the matrix.
bool is_pointwise(const ConvGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0;
}

}  // namespace

// Per thread: an im2col chunk, a masked-gradient chunk, and partial dw/db sums.
int64_t conv2d_im2col_workspace_floats(const ConvGeometry& g, int threads) {
  const int64_t masked = images_per_chunk(g, threads) * g.out_pixels() * g.co;
  return threads * (chunk_floats(g, threads) + masked + g.k() * g.co + g.co);
}

void im2col(const ConvGeometry& g, const float* x, int64_t n0, int64_t n1, float* col) {
  const int64_t c = g.c;
  for (int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * g.h * g.w * c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        float* row = col + (((n - n0) * g.oh + oy) * g.ow + ox) * g.k();
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh + ky - g.pad_top;
          float* dst = row + ky * g.kw * c;
          if (iy < 0 || iy >= g.h) {
            std::memset(dst, 0, sizeof(float) * g.kw * c);
            continue;
          }
          const int64_t ix0 = ox * g.sw - g.pad_left;
          if (ix0 >= 0 && ix0 + g.kw <= g.w) {  // the whole kernel row is inside
            std::memcpy(dst, xn + (iy * g.w + ix0) * c, sizeof(float) * g.kw * c);
            continue;
          }
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ix0 + kx;
            if (ix < 0 || ix >= g.w)
              std::memset(dst + kx * c, 0, sizeof(float) * c);
            else
              std::memcpy(dst + kx * c, xn + (iy * g.w + ix) * c, sizeof(float) * c);
          }
        }
      }
    }
  }
}

void col2im_add(const ConvGeometry& g, const float* col, int64_t n0, int64_t n1, float* dx) {
  const int64_t c = g.c;
  for (int64_t n = n0; n < n1; ++n) {
    float* dxn = dx + n * g.h * g.w * c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const float* row = col + (((n - n0) * g.oh + oy) * g.ow + ox) * g.k();
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh + ky - g.pad_top;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ox * g.sw + kx - g.pad_left;
            if (ix < 0 || ix >= g.w) continue;
            const float* src = row + (ky * g.kw + kx) * c;
            float* dst = dxn + (iy * g.w + ix) * c;
            for (int64_t ci = 0; ci < c; ++ci) dst[ci] += src[ci];
          }
        }
      }
    }
  }
}

void conv2d_im2col_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                           float* y, bool relu, float* workspace, int threads) {
  const int64_t per = images_per_chunk(g, threads), chunks = chunk_count(g, threads), k = g.k(),
                co = g.co;
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, chunks)));
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int64_t n0 = ch * per, n1 = std::min(g.n, n0 + per);
    const int64_t rows = (n1 - n0) * g.out_pixels();
    const float* a = x + n0 * g.h * g.w * g.c;
    if (!is_pointwise(g)) {
      float* col =
          workspace + omp_get_thread_num() * (chunk_floats(g, threads) +
                                              images_per_chunk(g, threads) * g.out_pixels() * co);
      im2col(g, x, n0, n1, col);
      a = col;
    }
    float* yc = y + n0 * g.out_pixels() * co;
    gemm(false, false, rows, co, k, 1.0f, a, k, w, co, 0.0f, yc, co);
    for (int64_t r = 0; r < rows; ++r) {
      float* yr = yc + r * co;
      if (relu) {
        for (int64_t j = 0; j < co; ++j) yr[j] = std::max(0.0f, yr[j] + b[j]);
      } else {
        for (int64_t j = 0; j < co; ++j) yr[j] += b[j];
      }
    }
  }
}

void conv2d_im2col_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                   const float* relu_y, float* dw, float* db, float* workspace,
                                   int threads) {
  const int64_t per = images_per_chunk(g, threads), chunks = chunk_count(g, threads), k = g.k(),
                co = g.co;
  const int64_t masked_floats = per * g.out_pixels() * co;
  // Each thread accumulates its own (K x CO) partial sums; they are added at the end.
  float* partial = workspace + threads * (chunk_floats(g, threads) + masked_floats);
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, chunks)));
#pragma omp parallel num_threads(parts)
  {
    const int t = omp_get_thread_num();
    float* col = workspace + t * (chunk_floats(g, threads) + masked_floats);
    float* masked = col + chunk_floats(g, threads);
    float* dwt = partial + t * (k * co + co);
    float* dbt = dwt + k * co;
    std::memset(dwt, 0, sizeof(float) * (k * co + co));
#pragma omp for schedule(static)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const int64_t n0 = ch * per, n1 = std::min(g.n, n0 + per);
      const int64_t rows = (n1 - n0) * g.out_pixels();
      const float* a = x + n0 * g.h * g.w * g.c;
      if (!is_pointwise(g)) {
        im2col(g, x, n0, n1, col);
        a = col;
      }
      const float* dyc = dy + n0 * g.out_pixels() * co;
      if (relu_y) {  // the ReLU backward, fused while the chunk is in cache
        const float* yc = relu_y + n0 * g.out_pixels() * co;
        for (int64_t i = 0; i < rows * co; ++i) masked[i] = yc[i] > 0.0f ? dyc[i] : 0.0f;
        dyc = masked;
      }
      gemm(true, false, k, co, rows, 1.0f, a, k, dyc, co, 1.0f, dwt, co);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < co; ++j) dbt[j] += dyc[r * co + j];
    }
  }
  sum_filter_partials(partial, parts, k, co, dw, db, threads);
}

void conv2d_im2col_backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                                 float* workspace, int threads) {
  const int64_t per = images_per_chunk(g, threads), chunks = chunk_count(g, threads), k = g.k(),
                co = g.co;
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, chunks)));
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int64_t n0 = ch * per, n1 = std::min(g.n, n0 + per);
    const int64_t rows = (n1 - n0) * g.out_pixels();
    const float* dyc = dy + n0 * g.out_pixels() * co;
    if (is_pointwise(g)) {
      gemm(false, true, rows, k, co, 1.0f, dyc, co, w, co, 0.0f, dx + n0 * g.h * g.w * g.c, k);
      continue;
    }
    float* col =
        workspace + omp_get_thread_num() * (chunk_floats(g, threads) +
                                            images_per_chunk(g, threads) * g.out_pixels() * co);
    gemm(false, true, rows, k, co, 1.0f, dyc, co, w, co, 0.0f, col, k);
    std::memset(dx + n0 * g.h * g.w * g.c, 0, sizeof(float) * (n1 - n0) * g.h * g.w * g.c);
    col2im_add(g, col, n0, n1, dx);
  }
}

}  // namespace drun::kernels::cpu

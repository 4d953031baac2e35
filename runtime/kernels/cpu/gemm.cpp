#include "kernels/cpu/gemm.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

namespace drun::kernels::cpu {

void blas_init_single_threaded() {
  openblas_set_num_threads(1);
}

static void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
          int threads) {
  // Splitting below ~4 MFLOP costs more in fork/join than it saves.
  if (threads <= 1 || 2.0 * m * n * k < 4e6) {
    sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const bool split_rows = m >= n;
  const int64_t extent = split_rows ? m : n;
  const int parts = static_cast<int>(std::min<int64_t>(threads, extent));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    // Blocks are rounded to 16 so vector kernels see whole panels.
    const int64_t step = (extent + parts - 1) / parts;
    const int64_t rounded = (step + 15) / 16 * 16;
    const int64_t lo = std::min(extent, p * rounded), hi = std::min(extent, lo + rounded);
    if (lo >= hi) continue;
    if (split_rows) {
      const float* ap = ta ? a + lo : a + lo * lda;
      sgemm(ta, tb, hi - lo, n, k, alpha, ap, lda, b, ldb, beta, c + lo * ldc, ldc);
    } else {
      const float* bp = tb ? b + lo * ldb : b + lo;
      sgemm(ta, tb, m, hi - lo, k, alpha, a, lda, bp, ldb, beta, c + lo, ldc);
    }
  }
}

}  // namespace drun::kernels::cpu

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

// Blocks of 16 rows or columns, so vector kernels see whole panels.
static int64_t blocks_of_16(int64_t extent) {
  return (extent + 15) / 16;
}

// The length of each of `parts` pieces of extent, whole blocks of 16 (so the
// last piece may be shorter, and fewer pieces may be needed).
static int64_t step_of(int64_t extent, int64_t parts) {
  return (blocks_of_16(extent) + parts - 1) / parts * 16;
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
          int threads) {
  // Splitting below ~4 MFLOP costs more in fork/join than it saves.
  if (threads <= 1 || 2.0 * m * n * k < 4e6) {
    sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // C in a grid of blocks, one per thread: along its longer side first; where
  // that side has fewer blocks of 16 than threads (a Dense layer's forward at
  // batch 64: 64 x 64 with K = 5408), along the other side too. Measured on a
  // 16-core Xeon: 4 row blocks alone left 12 threads idle and took 0.26 ms.
  const bool rows_first = m >= n;
  const int64_t along_long = std::min<int64_t>(threads, blocks_of_16(rows_first ? m : n));
  const int64_t along_short =
      std::min<int64_t>(threads / along_long, blocks_of_16(rows_first ? n : m));
  const int64_t row_step = step_of(m, rows_first ? along_long : along_short);
  const int64_t col_step = step_of(n, rows_first ? along_short : along_long);
  const int64_t row_parts = (m + row_step - 1) / row_step,
                col_parts = (n + col_step - 1) / col_step;
  const int parts = static_cast<int>(row_parts * col_parts);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    const int64_t r0 = std::min(m, p / col_parts * row_step), r1 = std::min(m, r0 + row_step);
    const int64_t c0 = std::min(n, p % col_parts * col_step), c1 = std::min(n, c0 + col_step);
    if (r0 >= r1 || c0 >= c1) continue;
    const float* ap = ta ? a + r0 : a + r0 * lda;
    const float* bp = tb ? b + c0 * ldb : b + c0;
    sgemm(ta, tb, r1 - r0, c1 - c0, k, alpha, ap, lda, bp, ldb, beta, c + r0 * ldc + c0, ldc);
  }
}

}  // namespace drun::kernels::cpu

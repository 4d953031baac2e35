#include "kernels/cpu/gemm.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"

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

// How many pieces of K a product is summed from: more than one where C is
// small and K long (a Dense layer's forward at batch 64: 64 x 64 with
// K = 5408). A grid of 16 x 16 blocks of such a C has each of 16 threads read
// a whole panel of A and of B, every panel four times over (measured on a
// 16-core Xeon: 0.26 ms, 2.2x one thread); pieces of K give each thread its
// own part of both. A larger C (the same layer at batch 256: 256 x 64) takes
// fewer pieces, each split into blocks of rows: 4 x 4 parts there, where 16
// blocks of rows alone had every thread pack all of B (1.4 MB; 0.39 ms on
// that Xeon, 4x one thread). Decided by the shape alone, never by the thread
// count, and the pieces added in order: the result is the same on any number
// of threads. C's partial products are the cost: at most 15 x 4096 floats
// (240 KiB), kept on the stack so that a training step never allocates.
constexpr int64_t kMaxParts = 16, kPartialFloats = (kMaxParts - 1) * 4096;

struct KSplit {
  int64_t pieces = 1, row_parts = 1;
};

static KSplit k_split(int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kMinPiece = 256;
  if (k < 2 * kMinPiece || 2.0 * m * n * k < 4e6) return {};
  const int64_t pieces = std::min({kMaxParts, k / kMinPiece, 1 + kPartialFloats / (m * n)});
  if (pieces < 2) return {};
  return {pieces, std::min(blocks_of_16(m), kMaxParts / pieces)};
}

// C = alpha op(A) op(B) + beta C as the sum of `pieces` products over
// consecutive ranges of K, each in row_parts blocks of rows: the first piece
// with beta into C, the others into partial products, added to C in order.
static void gemm_k_pieces(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                          const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                          float* c, int64_t ldc, int threads, KSplit split) {
  const int64_t step = step_of(k, split.pieces), count = (k + step - 1) / step;
  const int64_t row_step = step_of(m, split.row_parts), row_parts = (m + row_step - 1) / row_step;
  alignas(64) float partial[kPartialFloats];
  const int64_t parts = count * row_parts;
  const int team = static_cast<int>(std::min<int64_t>(threads, parts));
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t part = 0; part < parts; ++part) {
    const int64_t p = part / row_parts, r0 = part % row_parts * row_step;
    const int64_t rows = std::min(m, r0 + row_step) - r0;
    const int64_t k0 = p * step, kl = std::min(k, k0 + step) - k0;
    const float* ap = ta ? a + k0 * lda + r0 : a + r0 * lda + k0;
    const float* bp = tb ? b + k0 : b + k0 * ldb;
    if (p == 0)
      sgemm(ta, tb, rows, n, kl, alpha, ap, lda, bp, ldb, beta, c + r0 * ldc, ldc);
    else
      sgemm(ta, tb, rows, n, kl, alpha, ap, lda, bp, ldb, 0.0f, partial + (p - 1) * m * n + r0 * n,
            n);
  }
  const int rows_team = static_cast<int>(std::min<int64_t>(threads, m));
#pragma omp parallel for num_threads(rows_team) schedule(static) if (rows_team > 1)
  for (int64_t r = 0; r < m; ++r) {
    float* cr = c + r * ldc;
    for (int64_t p = 1; p < count; ++p) {
      const float* pr = partial + (p - 1) * m * n + r * n;
      for (int64_t j = 0; j < n; ++j) cr[j] += pr[j];
    }
  }
}

// A C of few rows and many columns (a recurrent step's h_{t-1} R: 32 x 1024,
// K 256, and its gradient dz R^T, nn against the LSTM's transposed copy of R
// and nt elsewhere): OpenBLAS would pack all of B for a few rows of A, so
// the instruction set's kernels that read B in place
// (isa/gemm_small_impl.hpp) compute it. Each element is summed in the same
// order on any number of threads.
static bool few_rows(bool ta, int64_t m, int64_t n, int64_t k) {
  return !ta && m <= 64 && n >= 128 && k >= 32 && k <= 4096;
}

// The same kernel for more rows, nn, where each strip of B fits its panel
// (K <= 1,024) and C is at most 512 Ki floats: an LSTM's d(input) against
// its kernel's transposed copy (2,048 x 64, K 1,024), a Dense layer's or
// attention's projection at 2,048 rows (x 96, x 128). On a Zen 4 core, 1
// thread, C not in cache: 1.2x OpenBLAS at 2,048 x 64 x 1,024, 1.18x at
// 2,048 x 96 x 256 (the bias added as C is written, where OpenBLAS needs it
// written first). Larger C stays with OpenBLAS: the LSTM's input projection
// (2,048 x 1,024, K 64) was no faster in the step, and 2,048 x 512 (the
// transformer's MLP) was no faster on an Emerald Rapids core in the strip
// order this kernel had then (kept on OpenBLAS until measured there again).
// x86 only: on POWER, OpenBLAS' kernels are not measured against it.
static bool streams_b(bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  const Isa isa = cpu_kernels().isa;
  return !ta && !tb && (isa == Isa::avx2 || isa == Isa::avx512) && n >= 64 && k >= 64 &&
         k <= 1024 && m * n <= (int64_t{1} << 19);
}

// Splitting below ~4 MFLOP costs more in fork/join than it saves.
static int team_for(int64_t m, int64_t n, int64_t k, int threads) {
  return 2.0 * m * n * k < 4e6 ? 1 : threads;
}

// drun's kernel's parts: blocks of 32 columns (whole vectors for every
// variant) and shares of rows in whole tiles of 12 (AVX-512's; two of AVX2's).
constexpr int64_t kColumnBlock = 32, kRowTile = 12;

static int64_t row_share(int64_t m, int64_t parts) {
  return ((m + parts - 1) / parts + kRowTile - 1) / kRowTile * kRowTile;
}

// x^T dy (A stored k x m) on a grid of blocks of 32 columns and, where they
// are fewer than twice the threads, shares of rows (whole tiles of 12): each
// element is summed over all of K on one thread whatever the grid.
static void gemm_tn_in_place(int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                             int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                             int64_t ldc, int team) {
  const auto run = cpu_kernels().gemm_tn_small_m;
  const int64_t col_blocks = (n + kColumnBlock - 1) / kColumnBlock;
  const int64_t row_parts =
      team > 1 ? std::min((2 * team + col_blocks - 1) / col_blocks, (m + kRowTile - 1) / kRowTile)
               : 1;
  const int64_t share = row_share(m, row_parts);
  for_each_range(col_blocks * row_parts, team, [&](int64_t, int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      const int64_t r0 = p / col_blocks * share, j0 = p % col_blocks * kColumnBlock;
      if (r0 < m)
        run(std::min(share, m - r0), k, alpha, a + r0, lda, b, ldb, beta, c + r0 * ldc, ldc, j0,
            std::min(n, j0 + kColumnBlock), nullptr);
    }
  });
}

// A C of few rows is split by columns in blocks of 32, each part copying
// its strips of B once. A C of more rows
// is computed in blocks of at most 192 rows, all columns each, so that C is
// written a block of rows at a time: by whole strips of 32 columns over all
// 2,048 rows it went to memory in 128-byte pieces a page apart (measured on
// an LSTM's input projection, 8 MiB: 0.9 ms slower than OpenBLAS in the
// step, where blocks of rows and C's prefetch made it even).
static void gemm_in_place(bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                          int64_t ldc, int threads, const float* bias) {
  const CpuKernels& kernels = cpu_kernels();
  const auto run = tb ? kernels.gemm_nt_small_m : kernels.gemm_nn_small_m;
  const int team = team_for(m, n, k, threads);
  if (m <= 64) {
    const int64_t blocks = (n + kColumnBlock - 1) / kColumnBlock;
    for_each_range(blocks, team, [&](int64_t, int64_t first, int64_t last) {
      run(m, k, alpha, a, lda, b, ldb, beta, c, ldc, first * kColumnBlock,
          std::min(n, last * kColumnBlock), bias);
    });
    return;
  }
  // Each thread an equal share of rows, in blocks of at most 192.
  constexpr int64_t kBlock = 192;
  const int64_t share = row_share(m, team);
  for_each_range(team, team, [&](int64_t, int64_t first, int64_t last) {
    const int64_t end = std::min(m, last * share);
    for (int64_t r0 = first * share; r0 < end; r0 += kBlock)
      run(std::min(kBlock, end - r0), k, alpha, a + r0 * lda, lda, b, ldb, beta, c + r0 * ldc, ldc,
          0, n, bias);
  });
}

// An nt product drun's nn kernel would compute (streams_b) with a B of up to
// 64 Ki floats (a layer's weights: dX = dY W^T of a Dense layer's or
// attention's projection): B transposed into a copy on the stack, then nn. On
// a Zen 4 core, B not in cache, 1 thread: 2,048 x 128 with K 512, 2.90 ->
// 2.55 ms; K 128, 0.76 -> 0.69 ms (the copy included).
constexpr int64_t kMaxTransposedB = int64_t{1} << 16;

static bool transposes_b(bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  return !ta && tb && n * k <= kMaxTransposedB && streams_b(false, false, m, n, k);
}

static void gemm_nt_as_nn(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                          int threads) {
  alignas(64) float bt[kMaxTransposedB];
  constexpr int64_t kTile = 8;  // blocks whose lines of b and of bt stay in L1
  for (int64_t j0 = 0; j0 < n; j0 += kTile)
    for (int64_t p0 = 0; p0 < k; p0 += kTile)
      for (int64_t j = j0; j < std::min(n, j0 + kTile); ++j)
        for (int64_t p = p0; p < std::min(k, p0 + kTile); ++p) bt[p * n + j] = b[j * ldb + p];
  gemm_in_place(false, m, n, k, alpha, a, lda, bt, n, beta, c, ldc, threads, nullptr);
}

// A weight gradient x^T dy (tn, K the batch's rows, 256 to 2,048: the nn
// kernel's panel of B; C a layer's weights of at most 512 Ki floats): the nn
// kernel with A's broadcasts read along x's rows (gemm_tn_in_place), each
// element summed over all of K in order on one thread, so that no pieces of
// K are needed for the same bits on any thread count. On a Zen 4 core, 1
// thread, operands in cache: 128 x 128, K 2,048 (attention's projections at
// 2,048 rows), 0.82 -> 0.62 ms against OpenBLAS in pieces of K; 128 x 512,
// 3.10 -> 2.68; an LSTM 256's recurrent kernel's (256 x 1,024), 11.4 -> 10.4.
static bool transposed_a_in_place(bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  const Isa isa = cpu_kernels().isa;
  return ta && !tb && (isa == Isa::avx2 || isa == Isa::avx512) && n >= 64 && m >= 16 && k >= 256 &&
         k <= 2048 && m * n <= (int64_t{1} << 19);
}

bool gemm_adds_bias(bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  return few_rows(ta, m, n, k) || streams_b(ta, tb, m, n, k);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads,
          const float* bias) {
  if (m == 0 || n == 0) return;
  if (gemm_adds_bias(ta, tb, m, n, k)) {  // drun's own kernel
    gemm_in_place(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads, bias);
    return;
  }
  if (bias) throw std::logic_error("gemm: a bias only where gemm_adds_bias (gemm.hpp)");
  if (transposed_a_in_place(ta, tb, m, n, k)) {
    gemm_tn_in_place(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, team_for(m, n, k, threads));
    return;
  }
  if (transposes_b(ta, tb, m, n, k)) {
    gemm_nt_as_nn(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
    return;
  }
  if (const KSplit split = k_split(m, n, k); split.pieces > 1) {
    gemm_k_pieces(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads, split);
    return;
  }
  // Splitting below ~4 MFLOP costs more in fork/join than it saves.
  if (threads <= 1 || 2.0 * m * n * k < 4e6) {
    sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // C in a grid of blocks, one per thread: along its longer side first; where
  // that side has fewer blocks of 16 than threads, along the other side too
  // (on a 16-core Xeon, 4 row blocks alone left 12 threads idle).
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

// Attention's per-head products under a causal mask in drun's kernel, which
// skips the terms and entries the mask hides (about 40 % of the products at
// 64 steps, as PyTorch's fused causal attention does): x86, where the kernel
// is measured against OpenBLAS (which computes them all), and not tt.
static bool causal_in_place(const BatchedGemm& g) {
  const Isa isa = cpu_kernels().isa;
  return g.causal && (isa == Isa::avx2 || isa == Isa::avx512) && !(g.trans_a && g.trans_b) &&
         (!g.trans_b || g.n * g.k <= kMaxCausalKeys);
}

void batched_gemm(const BatchedGemm& g, float alpha, const float* a, const float* b, float beta,
                  float* y, int64_t first, int64_t last) {
  const bool in_place = causal_in_place(g);
  const CausalPart part = g.trans_b   ? CausalPart::scores
                          : g.trans_a ? CausalPart::by_scores_transposed
                                      : CausalPart::by_scores;
  for (int64_t p = first; p < last; ++p) {
    const int64_t i = p / g.heads, j = p % g.heads;
    const float* ap = a + i * g.a.outer + j * g.a.inner;
    const float* bp = b + i * g.b.outer + j * g.b.inner;
    float* yp = y + i * g.y.outer + j * g.y.inner;
    if (in_place)
      cpu_kernels().gemm_causal(part, g.m, g.n, g.k, alpha, ap, g.a.ld, bp, g.b.ld, beta, yp,
                                g.y.ld);
    else
      gemm(g.trans_a, g.trans_b, g.m, g.n, g.k, alpha, ap, g.a.ld, bp, g.b.ld, beta, yp, g.y.ld);
  }
}

}  // namespace drun::kernels::cpu

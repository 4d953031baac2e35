// GEMMs whose C has few rows (a recurrent step's h_{t-1} R and its gradient
// dz R^T at batch 32), over columns [j0, j1) of C so that threads can split
// C by columns. OpenBLAS packs B before every product, and at 32 rows that
// copy of the whole recurrent kernel (1 MiB for an LSTM of 256 units) cost as
// much as the arithmetic; these read B where it lies, streaming it from the
// cache, and keep a block of C in registers over all of K. Every element of
// C is summed over K in order, whatever the block it falls in, so the result
// does not depend on how the columns are split. Included by kernels_impl.hpp
// inside its ISA namespace, after vec_math_impl.hpp.

// C = alpha acc (+ bias) + beta C, C not read where beta is 0 (it may be
// uninitialised), bias a row of C's width or null.
inline vec scaled(vec acc, float alpha, float beta, const float* c, const float* bias) {
  vec y = alpha * acc;
  if (bias) y += load(bias);
  return beta == 0.0f ? y : y + beta * load(c);
}

// Rows R x V vectors of C = alpha A B (+ bias) + beta C: per k, V vectors of
// B's row and R broadcasts of A's column. With kCopy, B's rows are also
// written to `panel` (k rows of V W floats, contiguous) for the next rows'
// tiles. kLarge (a C of more rows than a recurrent step's, or a bias):
// C's lines are fetched for writing first, so that the misses of a C not
// in cache overlap the products instead of stalling the stores at the end;
// and the bias is added. Without it, the recurrent steps' tiles as they
// were (3 % faster at 32 x 1024 x 256 than with both, on a Zen 4 core).
// kTransA: A stored transposed (k x m, lda its row stride), A's element
// (r, p) at a[p lda + r]: a weight gradient x^T dy, the broadcasts of a step
// then consecutive floats of one row of x.
template <int R, int V, bool kLarge, bool kTransA, bool kCopy = false>
void gemm_nn_tile(int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float beta, float* c, int64_t ldc, const float* bias, float* panel = nullptr) {
  vec acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = vec{};
  if constexpr (kLarge)
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < V; ++v) __builtin_prefetch(c + r * ldc + v * W, 1);
  for (int64_t p = 0; p < k; ++p) {
    vec bv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) bv[v] = load(b + p * ldb + v * W);
    if constexpr (kCopy) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) store(panel + (p * V + v) * W, bv[v]);
      // B's rows are a page apart: the hardware prefetchers stop at pages.
      if (p + 16 < k)
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) __builtin_prefetch(b + (p + 16) * ldb + v * W);
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const float av = kTransA ? a[p * lda + r] : a[r * lda + p];
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[r][v] += av * bv[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) {
      float* cp = c + r * ldc + v * W;
      store(cp, scaled(acc[r][v], alpha, beta, cp, kLarge && bias ? bias + v * W : nullptr));
    }
}

// `rows` (<= R) rows: the tile of that height.
template <int R, int V, bool kLarge, bool kTransA>
void gemm_nn_rows(int rows, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc, const float* bias) {
  if (rows == R)
    gemm_nn_tile<R, V, kLarge, kTransA>(k, alpha, a, lda, b, ldb, beta, c, ldc, bias);
  else if constexpr (R > 1)
    gemm_nn_rows<R - 1, V, kLarge, kTransA>(rows, k, alpha, a, lda, b, ldb, beta, c, ldc, bias);
}

// C (m x n) = alpha A (m x k) B (k x n) + bias + beta C, columns [j0, j1).
// B's rows lie a row of B apart (4 KiB for an LSTM of 256 units), so the
// column strip a tile reads maps to a handful of L1 sets and leaves the cache
// before the next rows' tile reads it again: the first tile of each strip
// copies it into a contiguous panel on the stack, prefetching B's rows ahead,
// and the others read the panel (32 x 1024 x 256 on an Emerald Rapids core:
// 152 -> 128 us with B in L2; the LSTM LM's training step 1.07x). The panel
// holds 2,048 rows: a weight gradient's K (x^T dy over a batch of 32 x 64
// steps; read in place, an LSTM's 1,024 columns 4 KiB apart, it ran at 70
// GFLOP/s on a Zen 4 core, 104 through the panel).
template <bool kLarge, bool kTransA = false>
void gemm_nn_strips(int64_t m, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float beta, float* c, int64_t ldc, int64_t j0, int64_t j1,
                    const float* bias) {
  // Three eighths of the registers hold C, the rest B's vectors and A's broadcasts.
  constexpr int R = kRegs * 3 / 8;
  constexpr int64_t kPanelRows = 2048;
  const bool copy = m > R && k <= kPanelRows;
  alignas(64) float panel[kPanelRows * 2 * W];
  const auto bias_at = [&](int64_t j) { return bias ? bias + j : nullptr; };
  const auto row_of_a = [&](int64_t i) { return kTransA ? a + i : a + i * lda; };
  int64_t j = j0;
  for (; j + 2 * W <= j1; j += 2 * W) {
    const float* strip = b + j;
    int64_t strip_ld = ldb, i = 0;
    if (copy) {
      gemm_nn_tile<R, 2, kLarge, kTransA, true>(k, alpha, a, lda, strip, ldb, beta, c + j, ldc,
                                                bias_at(j), panel);
      strip = panel, strip_ld = 2 * W, i = R;
    }
    for (; i < m; i += R)
      gemm_nn_rows<R, 2, kLarge, kTransA>(static_cast<int>(std::min<int64_t>(R, m - i)), k, alpha,
                                          row_of_a(i), lda, strip, strip_ld, beta, c + i * ldc + j,
                                          ldc, bias_at(j));
  }
  for (; j + W <= j1; j += W)
    for (int64_t i = 0; i < m; i += R)
      gemm_nn_rows<R, 1, kLarge, kTransA>(static_cast<int>(std::min<int64_t>(R, m - i)), k, alpha,
                                          row_of_a(i), lda, b + j, ldb, beta, c + i * ldc + j, ldc,
                                          bias_at(j));
  for (; j < j1; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        s += (kTransA ? a[p * lda + i] : a[i * lda + p]) * b[p * ldb + j];
      float* cp = c + i * ldc + j;
      float y = alpha * s;
      if (bias) y += bias[j];
      *cp = beta == 0.0f ? y : y + beta * *cp;
    }
}

void gemm_nn_small_m(int64_t m, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float beta, float* c, int64_t ldc, int64_t j0, int64_t j1,
                     const float* bias) {
  if (bias || m > 64)
    gemm_nn_strips<true>(m, k, alpha, a, lda, b, ldb, beta, c, ldc, j0, j1, bias);
  else
    gemm_nn_strips<false>(m, k, alpha, a, lda, b, ldb, beta, c, ldc, j0, j1, nullptr);
}

// C (m x n) = alpha A B + beta C with A stored transposed (k x m): a
// weight gradient x^T dy over a batch's rows, each element summed over K in
// order whatever the columns' split.
void gemm_tn_small_m(int64_t m, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float beta, float* c, int64_t ldc, int64_t j0, int64_t j1,
                     const float*) {
  gemm_nn_strips<true, true>(m, k, alpha, a, lda, b, ldb, beta, c, ldc, j0, j1, nullptr);
}

// Lanes of a and b in turn: the low halves' (lo) or the high halves' (hi).
template <bool kHigh, size_t... I>
inline vec interleave(vec a, vec b, std::index_sequence<I...>) {
  constexpr int half = kHigh ? W / 2 : 0;
  return __builtin_shufflevector(a, b, (I % 2 ? W + half + I / 2 : half + I / 2)...);
}

// A W x W block transposed in registers: log2(W) rounds of the perfect
// shuffle, each moving the row index's top bit to the column index's bottom
// and the column's top bit to the row's bottom (W / 2 pairs of shuffles
// a round where W * W single floats took a load and a store each).
inline void transpose_block(vec (&rows)[W]) {
  for (int round = 1; round < W; round *= 2) {
    vec next[W];
    for (int i = 0; i < W / 2; ++i) {
      next[2 * i] = interleave<false>(rows[i], rows[i + W / 2], std::make_index_sequence<W>{});
      next[2 * i + 1] = interleave<true>(rows[i], rows[i + W / 2], std::make_index_sequence<W>{});
    }
    std::copy(next, next + W, rows);
  }
}

// bt (k x n, rows n apart) = B^T, B (n x k) with rows ldb apart: whole W x W
// blocks in registers, the edges one float at a time.
void transpose_into(int64_t n, int64_t k, const float* b, int64_t ldb, float* bt) {
  const int64_t nw = n / W * W, kw = k / W * W;
  for (int64_t j0 = 0; j0 < nw; j0 += W)
    for (int64_t p0 = 0; p0 < kw; p0 += W) {
      vec rows[W];
      for (int i = 0; i < W; ++i) rows[i] = load(b + (j0 + i) * ldb + p0);
      transpose_block(rows);
      for (int i = 0; i < W; ++i) store(bt + (p0 + i) * n + j0, rows[i]);
    }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = j < nw ? kw : 0; p < k; ++p) bt[p * n + j] = b[j * ldb + p];
}

// One head's product of attention under its causal mask, row i of the scores
// keeping its first min(i + 1, s) columns: the nn kernel a tile of R rows at
// a time, each over the part the mask leaves it. A tile of the scores
// C = A B^T (B the keys, s x k, transposed first into a copy on the stack)
// runs up to its last row's kept columns, in whole vectors, and writes zeros
// past them; a tile of C = P V takes the terms up to its last row's kept
// key, one of C = P^T dC (a tile of keys) those from its first key's query
// on. The terms left out are products with zeros, so every element is the
// full sum's, in the same order (about 40 % fewer products at 64 steps).
void gemm_causal(CausalPart part, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  constexpr int64_t R = kRegs * 3 / 8;
  alignas(64) float bt[kMaxCausalKeys];
  if (part == CausalPart::scores) {
    transpose_into(n, k, b, ldb, bt);
    b = bt, ldb = n;
  }
  for (int64_t r0 = 0; r0 < m; r0 += R) {
    const int64_t rows = std::min(R, m - r0);
    float* ct = c + r0 * ldc;
    if (part == CausalPart::scores) {
      const int64_t last_kept = masked_softmax_kept(true, m, r0 + rows - 1, n);
      const int64_t cols = std::min(n, (last_kept + W - 1) / W * W);
      gemm_nn_strips<false>(rows, k, alpha, a + r0 * lda, lda, b, ldb, beta, ct, ldc, 0, cols,
                            nullptr);
      for (int64_t r = 0; r < rows; ++r) std::fill(ct + r * ldc + cols, ct + r * ldc + n, 0.0f);
    } else if (part == CausalPart::by_scores) {
      gemm_nn_strips<false>(rows, masked_softmax_kept(true, m, r0 + rows - 1, k), alpha,
                            a + r0 * lda, lda, b, ldb, beta, ct, ldc, 0, n, nullptr);
    } else {
      // The first query that sees key r0 (masked_softmax_kept(p) > r0) is p = r0.
      const int64_t p0 = std::min(r0, k);
      gemm_nn_strips<false, true>(rows, k - p0, alpha, a + p0 * lda + r0, lda, b + p0 * ldb, ldb,
                                  beta, ct, ldc, 0, n, nullptr);
    }
  }
}

// The sum of v's lanes, halves added pairwise (a shuffle and an add per halving
// where scalars one by one would be W extractions).
template <int N, class V>
float lane_sum(V v) {
  if constexpr (N == 2) {
    return v[0] + v[1];
  } else {
    typedef float half __attribute__((vector_size(N / 2 * sizeof(float))));
    half lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    return lane_sum<N / 2>(lo + hi);
  }
}

// RA rows x RB columns of C = alpha A B^T + beta C: dot products of rows of
// A and of B, W terms per vector over k, each vector's lanes summed pairwise,
// then the last k % W terms.
template <int RA, int RB>
void gemm_nt_tile(int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float beta, float* c, int64_t ldc, const float* bias) {
  vec acc[RA][RB];
  for (int r = 0; r < RA; ++r)
    for (int q = 0; q < RB; ++q) acc[r][q] = vec{};
  const int64_t kv = k / W * W;
  for (int64_t p = 0; p < kv; p += W) {
    vec av[RA];
#pragma GCC unroll 8
    for (int r = 0; r < RA; ++r) av[r] = load(a + r * lda + p);
#pragma GCC unroll 8
    for (int q = 0; q < RB; ++q) {
      const vec bv = load(b + q * ldb + p);
#pragma GCC unroll 8
      for (int r = 0; r < RA; ++r) acc[r][q] += av[r] * bv;
    }
  }
  for (int r = 0; r < RA; ++r)
    for (int q = 0; q < RB; ++q) {
      // The last k % W terms one by one: a partial vector's copy through
      // memory would keep the accumulators in memory too.
      float s = lane_sum<W>(acc[r][q]);
      for (int64_t p = kv; p < k; ++p) s += a[r * lda + p] * b[q * ldb + p];
      float* cp = c + r * ldc + q;
      float y = alpha * s;
      if (bias) y += bias[q];
      *cp = beta == 0.0f ? y : y + beta * *cp;
    }
}

// C (m x n) = alpha A (m x k) B^T + beta C, B (n x k), columns [j0, j1).
void gemm_nt_small_m(int64_t m, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float beta, float* c, int64_t ldc, int64_t j0, int64_t j1,
                     const float* bias) {
  // RA x 4 accumulators, RA of A's vectors and one of B's in flight.
  constexpr int RA = kRegs / 8, RB = 4;
  const auto bias_at = [&](int64_t j) { return bias ? bias + j : nullptr; };
  int64_t j = j0;
  for (; j + RB <= j1; j += RB) {
    int64_t i = 0;
    for (; i + RA <= m; i += RA)
      gemm_nt_tile<RA, RB>(k, alpha, a + i * lda, lda, b + j * ldb, ldb, beta, c + i * ldc + j, ldc,
                           bias_at(j));
    for (; i < m; ++i)
      gemm_nt_tile<1, RB>(k, alpha, a + i * lda, lda, b + j * ldb, ldb, beta, c + i * ldc + j, ldc,
                          bias_at(j));
  }
  for (; j < j1; ++j)
    for (int64_t i = 0; i < m; ++i)
      gemm_nt_tile<1, 1>(k, alpha, a + i * lda, lda, b + j * ldb, ldb, beta, c + i * ldc + j, ldc,
                         bias_at(j));
}

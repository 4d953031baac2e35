// GEMM on the CPU: row-major C = alpha * op(A) * op(B) + beta * C through OpenBLAS.
// `threads` > 1 splits C into blocks of rows and columns (each element is
// computed by one thread, over all of K) and runs single-threaded SGEMMs on
// the runtime's OpenMP threads: on small shapes that beats OpenBLAS' own
// threading, which is erratic here. A C of up to 61,440 floats with a long K
// is summed from pieces of K instead (each in blocks of rows where C is larger),
// chosen by the shape alone (gemm.cpp), so its bits do not depend on the thread
// count; a grid block's may (OpenBLAS picks its kernels by shape). A C of at
// most 64 rows (an RNN step's), and an nn product of more rows whose K is
// at most 1,024 (gemm.cpp, streams_b), is drun's own kernel, split by
// columns and rows: the same bits on any thread count too. So is such a
// product nt whose B has at most 64 Ki floats, through B's transposed copy,
// and a tn product (a weight gradient) with K from 256 to 2,048.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels::cpu {

// Shapes: op(A) is M x K, op(B) is K x N, C is M x N; lda/ldb/ldc are row
// strides. `bias` (N values, added to every row of C) only where
// gemm_adds_bias: drun's own kernel adds it as it writes C.
bool gemm_adds_bias(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
          int threads = 1, const float* bias = nullptr);

// Matrices [first, last) of a batched GEMM (kernels/types.hpp), each on this
// thread: under a causal mask drun's kernel skips what the mask hides (x86),
// otherwise gemm() per matrix.
void batched_gemm(const BatchedGemm& g, float alpha, const float* a, const float* b, float beta,
                  float* y, int64_t first, int64_t last);

// Makes OpenBLAS single-threaded: every parallel loop of the runtime, GEMMs
// included, runs on the runtime's own threads so the two never oversubscribe.
void blas_init_single_threaded();

}  // namespace drun::kernels::cpu

#include "kernels/cuda/blas.hpp"

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

namespace drun::kernels::cuda {

struct Blas::Handle {
  cublasHandle_t h = nullptr;
};

namespace {
void check(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + cublasGetStatusString(rc));
}
}  // namespace

Blas::Blas() : handle_(std::make_unique<Handle>()) {
  check(cublasCreate(&handle_->h), "cublasCreate");
  check(cublasSetStream(handle_->h, cudaStreamPerThread), "cublasSetStream");  // device.hpp
}

Blas::~Blas() {
  if (handle_->h) cublasDestroy(handle_->h);
}

void Blas::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, const float* b, float beta, float* c) {
  // cuBLAS is column-major: row-major C = op(A) op(B) is column-major
  // C^T = op(B)^T op(A)^T, i.e. the same buffers with the operands swapped.
  const int lda = static_cast<int>(trans_a ? m : k);
  const int ldb = static_cast<int>(trans_b ? k : n);
  check(cublasSgemm(handle_->h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                    trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                    static_cast<int>(k), &alpha, b, ldb, a, lda, &beta, c, static_cast<int>(n)),
        "cublasSgemm");
}

void Blas::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                const void* a, const void* b, DType type, float beta, float* c) {
  if (type != DType::f16 && type != DType::bf16)
    throw std::logic_error(std::string("cuBLAS GEMM of ") + dtype_name(type) + " operands");
  const cudaDataType_t t = type == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
  const int lda = static_cast<int>(trans_a ? m : k);
  const int ldb = static_cast<int>(trans_b ? k : n);
  check(cublasGemmEx(handle_->h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                     trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), &alpha, b, t, ldb, a, t, lda, &beta, c, CUDA_R_32F,
                     static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

void Blas::gemm_batched(const BatchedGemm& g, float alpha, const float* a, const float* b,
                        float beta, float* y) {
  // One strided-batched call per row of the (batch, heads) grid, batched
  // along the other axis, whichever takes fewer calls: a small attention
  // (batch 32, 4 heads) is bound by launches, 4 calls rather than 32.
  const bool per_head = g.heads < g.batch;
  const int64_t calls = per_head ? g.heads : g.batch, count = per_head ? g.batch : g.heads;
  const auto call_step = [&](const MatrixLayout& l) { return per_head ? l.inner : l.outer; };
  const auto batch_step = [&](const MatrixLayout& l) { return per_head ? l.outer : l.inner; };
  // Row-major to column-major as gemm: the operands swap, each keeps its ld.
  for (int64_t i = 0; i < calls; ++i)
    check(cublasGemmStridedBatchedEx(
              handle_->h, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
              g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(g.n), static_cast<int>(g.m),
              static_cast<int>(g.k), &alpha, b + i * call_step(g.b), CUDA_R_32F,
              static_cast<int>(g.b.ld), batch_step(g.b), a + i * call_step(g.a), CUDA_R_32F,
              static_cast<int>(g.a.ld), batch_step(g.a), &beta, y + i * call_step(g.y), CUDA_R_32F,
              static_cast<int>(g.y.ld), batch_step(g.y), static_cast<int>(count),
              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
}

}  // namespace drun::kernels::cuda

// The CUDA backend's GEMM: cuBLAS SGEMM on device pointers, row-major like
// kernels/cpu/gemm.hpp. drun's own kernels share their declarations with
// their CPU namesakes (kernels/elementwise.hpp, activation.hpp, loss.hpp,
// batchnorm.hpp, optimizer_update.hpp); pooling is in pool.hpp, the cuDNN
// convolutions and their layout helpers in conv.hpp.
#pragma once
#include <cstdint>
#include <memory>

#include "kernels/types.hpp"
#include "tensor/dtype.hpp"

namespace drun::kernels::cuda {

// C (m x n) = alpha op(A) op(B) + beta C, row-major; op(A) is m x k.
class Blas {
 public:
  Blas();
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, const float* b, float beta, float* c);
  // The same with A and B of `type` (float16 or bfloat16) on the tensor
  // cores, products summed in float32, C float32.
  void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
            const void* b, DType type, float beta, float* c);

  // y_ij = alpha op(a_ij) op(b_ij) + beta y_ij for the grid of g (kernels/types.hpp),
  // float32: strided-batched calls along the longer of batch and heads, one per
  // row of the shorter.
  void gemm_batched(const BatchedGemm& g, float alpha, const float* a, const float* b, float beta,
                    float* y);

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace drun::kernels::cuda

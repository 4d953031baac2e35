// The CUDA backend's GEMM: cuBLAS SGEMM on device pointers, row-major like
// kernels/cpu/gemm.hpp. drun's own kernels share their declarations with
// their CPU namesakes (kernels/elementwise.hpp, activation.hpp, loss.hpp,
// batchnorm.hpp, optimizer_update.hpp); pooling is in pool.hpp, the cuDNN
// convolutions and their layout helpers in conv.hpp.
#pragma once
#include <cstdint>
#include <memory>

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

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace drun::kernels::cuda

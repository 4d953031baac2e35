// The CUDA backend's kernels, on device pointers, row-major like the CPU
// kernels they mirror (kernels/cpu): cuBLAS SGEMM, and own kernels for bias,
// ReLU, scaling, the fused softmax cross-entropy and the fused optimizer
// updates. Each launches on the default stream and returns without waiting.
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

// y[r, j] += bias[j] for rows of `cols`.
void bias_add(float* y, const float* bias, int64_t rows, int64_t cols);
// db[j] = sum over rows of dy[r, j].
void bias_grad(const float* dy, float* db, int64_t rows, int64_t cols);
void relu_forward(const float* x, float* y, int64_t n);
// dx = dy where y > 0, else 0.
void relu_backward(const float* y, const float* dy, float* dx, int64_t n);
void scale(float* x, float s, int64_t n);
// Softmax cross-entropy from logits (rows x classes) and int labels: writes
// each row's loss and dlogits = (softmax - onehot) / rows.
void softmax_cross_entropy(const float* logits, const int32_t* labels, float* row_loss,
                           float* dlogits, int64_t rows, int64_t classes);
// Keras SGD: v = momentum v - lr g; w += v (nesterov: w += momentum v - lr g);
// momentum 0: w -= lr g.
void sgd_update(float* w, const float* g, float* v, float lr, float momentum, bool nesterov,
                int64_t n);
// Keras Adam with the bias correction folded into lr_t.
void adam_update(float* w, const float* g, float* m, float* v, float lr_t, float beta_1,
                 float beta_2, float epsilon, int64_t n);

}  // namespace drun::kernels::cuda

// The CPU kernels that are compiled once per instruction set (isa/*.cpp) and
// chosen at start-up from what the CPU reports, as XNNPACK and OpenBLAS's
// DYNAMIC_ARCH do: one binary runs AVX-512 code on a CPU that has it and AVX2
// or baseline code elsewhere; on POWER, VSX code with 32 registers in
// flight. Everything else in kernels/cpu is compiled for
// the build's target (the distribution baseline, or -march=native).
//
// DRUN_ISA=baseline|avx2|avx512 (x86-64) or baseline|vsx (ppc64le) picks a variant by name instead
// of the best one; tests run every variant the CPU has against the scalar reference.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/pool.hpp"
#include "kernels/recurrent.hpp"

namespace drun::kernels::cpu {

enum class Isa { baseline, avx2, avx512, vsx };

// Where attention's causal scores (t x s) are in one of its per-head
// products: C = A B^T with B the keys (scores: m t, n s; n * k at most
// kMaxCausalKeys), A of C = A B (by_scores: m t, k s), or A of C = A^T B,
// stored t x s (by_scores_transposed: m s, k t).
enum class CausalPart { scores, by_scores, by_scores_transposed };
constexpr int64_t kMaxCausalKeys = int64_t{1} << 16;

// One instruction set's variants. Each works on images [n0, n1) of its batch,
// so the caller splits a batch over threads.
struct CpuKernels {
  Isa isa;
  const char* name;  // "baseline", "avx2", "avx512", "vsx"
  int vec_floats;    // floats per vector register (4, 8, 16)
  // Direct convolution (conv2d_direct.hpp): y = conv(x, w) + b, ReLU if asked.
  void (*conv_direct_forward)(const ConvGeometry& g, const float* x, const float* w, const float* b,
                              float* y, bool relu, int64_t n0, int64_t n1);
  // Adds the filter and bias gradients of images [n0, n1) to dw, db; dy is
  // masked by relu_y > 0 where relu_y is given. taps: OH*OW*K floats of scratch.
  void (*conv_direct_backward_filter)(const ConvGeometry& g, const float* x, const float* dy,
                                      const float* relu_y, float* dw, float* db, float* taps,
                                      int64_t n0, int64_t n1);
  // The direct convolution, ReLU if asked, and max pooling pg over its output
  // in one pass (conv2d_direct.hpp, conv2d_direct_max_pool_suits): y and
  // argmax as max_pool_forward writes them, the convolution's output never.
  void (*conv_direct_max_pool_forward)(const ConvGeometry& g, const PoolGeometry& pg,
                                       const float* x, const float* w, const float* b, float* y,
                                       int32_t* argmax, bool relu, int64_t n0, int64_t n1);
  // Adds its filter and bias gradients of images [n0, n1) to dw, db from the
  // pooled gradient dy, masked by relu_y > 0 (the pooled output) where given.
  // taps: OH*OW*K floats of scratch.
  void (*conv_direct_max_pool_backward_filter)(const ConvGeometry& g, const PoolGeometry& pg,
                                               const float* x, const float* dy,
                                               const int32_t* argmax, const float* relu_y,
                                               float* dw, float* db, float* taps, int64_t n0,
                                               int64_t n1);
  // Implicit-GEMM convolution (conv2d_implicit.hpp) of one image x (H, W, C),
  // unpadded: y = conv + b (b may be null: no bias), ReLU if asked. Needs
  // CO % vec_floats == 0 and at most one padded column each side
  // (conv2d_implicit.cpp's pads_in_kernel).
  void (*conv_implicit_forward)(const ConvGeometry& g, const float* x, const float* w,
                                const float* b, float* y, bool relu);
  // dw += the filter gradient of one image x (H, W, C), unpadded, for output
  // gradient dz (OH, OW, CO).
  void (*conv_implicit_backward_filter)(const ConvGeometry& g, const float* x, const float* dz,
                                        float* dw);
  // Winograd F(m x m, 3x3), m = 2 or 4 (conv2d_winograd.hpp), of one image x
  // (H, W, C): y = conv + b (b may be null), ReLU if asked, from the
  // transformed kernel u (E, C, CO). buf: winograd_block_floats(g, m) floats.
  void (*conv_winograd_forward)(const ConvGeometry& g, const float* x, const float* u,
                                const float* b, float* y, bool relu, float* buf, int m);
  // s (E, C, CO) += the transformed filter gradient of `images` consecutive
  // images x for output gradient dz (OH, OW, CO each), masked by relu_y > 0
  // where relu_y is given.
  void (*conv_winograd_backward_filter)(const ConvGeometry& g, const float* x, const float* dz,
                                        const float* relu_y, int64_t images, float* s, float* buf,
                                        int m);
  void (*max_pool_forward)(const PoolGeometry& g, const float* x, float* y, int32_t* argmax,
                           int64_t n0, int64_t n1);
  void (*max_pool_backward)(const PoolGeometry& g, const float* dy, const int32_t* argmax,
                            float* dx, int64_t n0, int64_t n1);
  // Batch normalisation's loops over rows [r0, r1) of rows x c values
  // (isa/batchnorm_impl.hpp says what each computes; batchnorm.cpp combines).
  void (*bn_shifted_sums)(const float* x, int64_t c, int64_t r0, int64_t r1, float* s1, float* s2);
  void (*bn_normalize)(const float* x, int64_t c, const float* mean, const float* inv_std,
                       const float* gamma, const float* beta, bool relu, int64_t r0, int64_t r1,
                       float* y);
  void (*bn_grad_sums)(const float* x, const float* dy, int64_t c, const float* mean,
                       const float* inv_std, const float* gamma, const float* relu_beta, int64_t r0,
                       int64_t r1, float* sb, float* sg);
  void (*bn_grad_input)(const float* x, const float* dy, int64_t c, const float* mean,
                        const float* inv_std, const float* gamma, const float* relu_beta,
                        const float* dbeta, const float* dgamma, float inv_rows, int64_t r0,
                        int64_t r1, float* dx);
  // The LSTM's step (kernels/recurrent.hpp's functors) over batch rows [b0, b1).
  void (*lstm_step_forward)(const LstmStepForward& f, int64_t b0, int64_t b1);
  void (*lstm_step_backward)(const LstmStepBackward& f, int64_t b0, int64_t b1);
  // Columns [j0, j1) of C (m x n) = alpha A (m x k) op(B) + bias + beta C,
  // B read in place (isa/gemm_small_impl.hpp): nn with B (k x n), nt with B
  // (n x k) transposed; bias (n values, added to every row) may be null.
  void (*gemm_nn_small_m)(int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                          int64_t j0, int64_t j1, const float* bias);
  void (*gemm_nt_small_m)(int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                          int64_t j0, int64_t j1, const float* bias);
  // The same nn kernel with A stored transposed (k x m): x^T dy; no bias.
  void (*gemm_tn_small_m)(int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                          int64_t j0, int64_t j1, const float* bias);
  // One head's product of attention under its causal mask (kernels/types.hpp
  // BatchedGemm::causal), the nn kernel over what the mask leaves: `part`
  // says which operand the scores are (isa/gemm_small_impl.hpp).
  void (*gemm_causal)(CausalPart part, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  // The exact GELU over n values (isa/gelu_impl.hpp): y = x Phi(x), and
  // dx = dy (Phi(x) + x phi(x)); y may be x, dx may be dy.
  void (*gelu_forward)(const float* x, float* y, int64_t n);
  void (*gelu_backward)(const float* x, const float* dy, float* dx, int64_t n);
  // Attention's masked softmax over rows of cols (kernels/masked_softmax.hpp).
  void (*masked_softmax_forward)(float scale, bool causal, int64_t t, const float* x, float* y,
                                 int64_t rows, int64_t cols);
  void (*masked_softmax_backward)(float scale, const float* y, const float* dy, float* dx,
                                  int64_t rows, int64_t cols);
  // Layer normalisation's rows (kernels/layer_norm.hpp).
  void (*layer_norm_forward)(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float* mean, float* inv_std, float* y);
  void (*layer_norm_backward_input)(const float* x, const float* dy, int64_t rows, int64_t c,
                                    const float* gamma, const float* mean, const float* inv_std,
                                    float* dx);
  // dgamma, dbeta of columns [j0, j1) only (j0 a multiple of vec_floats).
  void (*layer_norm_param_grads)(const float* x, const float* dy, int64_t rows, int64_t c,
                                 const float* mean, const float* inv_std, int64_t j0, int64_t j1,
                                 float* dgamma, float* dbeta);
  // s = the sums over rows of x's columns [j0, j1) (j0 a multiple of vec_floats).
  void (*column_sums)(const float* x, int64_t rows, int64_t cols, int64_t j0, int64_t j1, float* s);
  // kernels/loss.hpp's softmax_xent_sparse over `rows` rows, the gradient scaled by
  // inv_rows, each row's loss in row_loss (NaN for a label outside [0, cols)).
  void (*softmax_xent_sparse_rows)(const float* logits, const int32_t* labels, int64_t rows,
                                   int64_t cols, float inv_rows, float* grad, float* row_loss);
};

// The variants this build has and this CPU can run, best last.
std::vector<const CpuKernels*> supported_cpu_kernels();
// The variant this process uses: DRUN_ISA's, else the best supported. Chosen
// once; throws UsageError naming the choices if DRUN_ISA names one this CPU
// or build lacks.
const CpuKernels& cpu_kernels();
// The CPU's model name as the OS reports it ("unknown" where it does not).
std::string cpu_model_name();

}  // namespace drun::kernels::cpu

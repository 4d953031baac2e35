// The hot CPU kernels written once over GCC's generic vectors of W floats;
// isa/<name>.cpp includes this file with the vector width and register count
// of its instruction set and compiles it with that set's flags, so each
// variant keeps its accumulators in the registers its CPU has (AVX-512: 32 of
// 16 floats; AVX2: 16 of 8; SSE/VSX baseline: 16 of 4). Register blocking is
// derived from those two numbers rather than written per ISA.
//
// This file holds what the families share (the vector type, W, kRegs, load,
// store) and the table of the variant (CpuKernels); each family is a file of
// its own beside it, included here inside the ISA namespace: the direct
// convolution (conv_direct_impl.hpp), the direct convolution fused with the
// max pooling after it (conv_direct_max_pool_impl.hpp), max pooling
// (max_pool_impl.hpp), the implicit-GEMM and Winograd convolutions
// (conv_implicit_impl.hpp, conv_winograd_impl.hpp), batch normalisation's
// loops (batchnorm_impl.hpp), the GEMM for a C of few rows
// (gemm_small_impl.hpp), the LSTM's step (recurrent_impl.hpp) with its
// vector exp, sigmoid and tanh (vec_math_impl.hpp), the exact GELU
// (gelu_impl.hpp), attention's masked softmax (masked_softmax_impl.hpp),
// layer normalisation with the column sums of bias gradients
// (layer_norm_impl.hpp) and the softmax cross-entropy with integer labels
// (softmax_xent_impl.hpp).
//
// Before including: DRUN_ISA_NAMESPACE (a name), DRUN_ISA_ENUM, DRUN_ISA_NAME,
// DRUN_VEC_FLOATS, DRUN_VEC_REGS; and, for an instruction set beyond the
// build's target, `#pragma GCC target` after including isa/includes.hpp. The
// pragma, rather than per-file compiler flags, keeps every inline function
// and template of the headers at the build's target: a copy compiled for
// AVX-512 could otherwise be the one the linker keeps for all callers.
// Only this file's own functions (internal linkage) get the instruction set.
// Layouts as in conv2d.hpp: x NHWC, w HWIO, y NHWC.
#include "kernels/cpu/isa/includes.hpp"

namespace drun::kernels::cpu::DRUN_ISA_NAMESPACE {
namespace {

constexpr int W = DRUN_VEC_FLOATS;
constexpr int kRegs = DRUN_VEC_REGS;

typedef float vec __attribute__((vector_size(W * sizeof(float))));
typedef float vec_unaligned __attribute__((vector_size(W * sizeof(float)), aligned(4)));

inline vec load(const float* p) {
  return *reinterpret_cast<const vec_unaligned*>(p);
}
inline void store(float* p, vec v) {
  *reinterpret_cast<vec_unaligned*>(p) = v;
}

// For the row-wise families (GELU, masked softmax, layer normalisation):
// lane masks, sums across the lanes, partial vectors at a row's end (e^a
// is vec_math_impl.hpp's).
typedef int32_t ivec __attribute__((vector_size(W * sizeof(int32_t))));

inline vec splat(float v) {
  return vec{} + v;
}

inline float lanes_sum(vec v) {
  float s = 0.0f;
  for (int l = 0; l < W; ++l) s += v[l];
  return s;
}

inline float lanes_max(vec v) {
  float m = v[0];
  for (int l = 1; l < W; ++l) m = std::max(m, v[l]);
  return m;
}

inline ivec lane_indices() {
  ivec lanes;
  for (int l = 0; l < W; ++l) lanes[l] = l;
  return lanes;
}

// Columns [j, j + W) of a row of cols, the ones past its end read as 0.
inline vec load_part(const float* row, int64_t j, int64_t cols) {
  if (j + W <= cols) return load(row + j);
  float part[W] = {};
  std::copy(row + j, row + cols, part);
  return load(part);
}

inline void store_part(float* row, int64_t j, int64_t cols, vec v) {
  if (j + W <= cols) return store(row + j, v);
  float part[W];
  store(part, v);
  std::copy(part, part + (cols - j), row + j);
}

#include "kernels/cpu/isa/vec_math_impl.hpp"  // first: the others use its exp
#include "kernels/cpu/isa/batchnorm_impl.hpp"
#include "kernels/cpu/isa/conv_direct_impl.hpp"
#include "kernels/cpu/isa/conv_direct_max_pool_impl.hpp"
#include "kernels/cpu/isa/conv_implicit_impl.hpp"
#include "kernels/cpu/isa/conv_winograd_impl.hpp"
#include "kernels/cpu/isa/gelu_impl.hpp"
#include "kernels/cpu/isa/layer_norm_impl.hpp"
#include "kernels/cpu/isa/masked_softmax_impl.hpp"
#include "kernels/cpu/isa/max_pool_impl.hpp"
// After vec_math_impl.hpp, whose functions they use.
#include "kernels/cpu/isa/gemm_small_impl.hpp"
#include "kernels/cpu/isa/recurrent_impl.hpp"
#include "kernels/cpu/isa/softmax_xent_impl.hpp"

}  // namespace

extern const CpuKernels kCpuKernels = {DRUN_ISA_ENUM,
                                       DRUN_ISA_NAME,
                                       W,
                                       conv_direct_forward,
                                       conv_direct_backward_filter,
                                       conv_direct_max_pool_forward,
                                       conv_direct_max_pool_backward_filter,
                                       conv_implicit_forward,
                                       conv_implicit_backward_filter,
                                       conv_winograd_forward,
                                       conv_winograd_backward_filter,
                                       max_pool_forward,
                                       max_pool_backward,
                                       bn_shifted_sums,
                                       bn_normalize,
                                       bn_grad_sums,
                                       bn_grad_input,
                                       lstm_step_forward,
                                       lstm_step_backward,
                                       gemm_nn_small_m,
                                       gemm_nt_small_m,
                                       gemm_tn_small_m,
                                       gemm_causal,
                                       gelu_forward,
                                       gelu_backward,
                                       masked_softmax_forward,
                                       masked_softmax_backward,
                                       layer_norm_forward,
                                       layer_norm_backward_input,
                                       layer_norm_param_grads,
                                       column_sums,
                                       softmax_xent_sparse_rows};

}  // namespace drun::kernels::cpu::DRUN_ISA_NAMESPACE

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
// (gemm_small_impl.hpp) and the LSTM's step (recurrent_impl.hpp) with its
// vector exp, sigmoid and tanh (vec_math_impl.hpp).
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

#include "kernels/cpu/isa/batchnorm_impl.hpp"
#include "kernels/cpu/isa/conv_direct_impl.hpp"
#include "kernels/cpu/isa/conv_direct_max_pool_impl.hpp"
#include "kernels/cpu/isa/conv_implicit_impl.hpp"
#include "kernels/cpu/isa/conv_winograd_impl.hpp"
#include "kernels/cpu/isa/max_pool_impl.hpp"
#include "kernels/cpu/isa/vec_math_impl.hpp"
// After vec_math_impl.hpp, whose functions they use.
#include "kernels/cpu/isa/gemm_small_impl.hpp"
#include "kernels/cpu/isa/recurrent_impl.hpp"

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
                                       gemm_nt_small_m};

}  // namespace drun::kernels::cpu::DRUN_ISA_NAMESPACE

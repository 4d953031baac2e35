// The avx512 variants of the hot CPU kernels (kernels_impl.hpp): 16 floats per
// vector register, 32 registers; this file's own functions are compiled for
// x86-64-v4 (the pragma below), whatever the build's target.
#include "kernels/cpu/isa/includes.hpp"

#if defined(__x86_64__)
// clang (the sanitizer and fuzz builds, docs/testing.md) has no such pragma:
// there the variant is compiled for the build's target, slower but the same.
#if !defined(__clang__)
#pragma GCC target("arch=x86-64-v4")
#endif
#define DRUN_ISA_NAMESPACE avx512
#define DRUN_ISA_ENUM Isa::avx512
#define DRUN_ISA_NAME "avx512"
#define DRUN_VEC_FLOATS 16
#define DRUN_VEC_REGS 32
#include "kernels/cpu/isa/kernels_impl.hpp"
#endif

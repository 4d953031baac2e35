// The avx2 variants of the hot CPU kernels (kernels_impl.hpp): 8 floats per
// vector register, 16 registers; this file's own functions are compiled for
// x86-64-v3 (the pragma below), whatever the build's target.
#include "kernels/cpu/isa/includes.hpp"

#if defined(__x86_64__)
// clang (the sanitizer and fuzz builds, docs/testing.md) has no such pragma:
// there the variant is compiled for the build's target, slower but the same.
#if !defined(__clang__)
#pragma GCC target("arch=x86-64-v3")
#endif
#define DRUN_ISA_NAMESPACE avx2
#define DRUN_ISA_ENUM Isa::avx2
#define DRUN_ISA_NAME "avx2"
#define DRUN_VEC_FLOATS 8
#define DRUN_VEC_REGS 16
#include "kernels/cpu/isa/kernels_impl.hpp"
#endif

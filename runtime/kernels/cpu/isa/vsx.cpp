// The vsx variants of the hot CPU kernels (kernels_impl.hpp) for POWER8 and
// newer: 4 floats per vector register, as wide as VSX is (a wider generic
// vector would be split into several registers and spill). VSX has 64 vector
// registers; the blocking is given 32 of them, as for AVX-512, which leaves the
// rest to the scalar taps and the compiler. The baseline variant stays the
// build target's code with 16 registers, the same blocking as on x86-64.
#include "kernels/cpu/isa/includes.hpp"

#if defined(__powerpc64__)
#pragma GCC target("vsx")
#define DRUN_ISA_NAMESPACE vsx
#define DRUN_ISA_ENUM Isa::vsx
#define DRUN_ISA_NAME "vsx"
#define DRUN_VEC_FLOATS 4
#define DRUN_VEC_REGS 32
#include "kernels/cpu/isa/kernels_impl.hpp"
#endif

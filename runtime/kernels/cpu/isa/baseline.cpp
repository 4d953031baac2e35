// The baseline variants of the hot CPU kernels (kernels_impl.hpp): 4 floats per
// vector register, 16 registers; compiled for the build's own target (SSE2 on
// x86-64, VSX on POWER, or -march=native).
#define DRUN_ISA_NAMESPACE baseline
#define DRUN_ISA_ENUM Isa::baseline
#define DRUN_ISA_NAME "baseline"
#define DRUN_VEC_FLOATS 4
#define DRUN_VEC_REGS 16
#include "kernels/cpu/isa/kernels_impl.hpp"

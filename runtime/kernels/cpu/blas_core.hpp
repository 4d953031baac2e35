// Which OpenBLAS core (kernel set) runs the GEMMs. OpenBLAS built with
// DYNAMIC_ARCH picks it from the CPU's model number when the library loads;
// on a CPU newer than the library (Debian's 0.3.21 on a recent Xeon) it
// falls back to a generic core such as Prescott, SSE3 code on an AVX-512 CPU.
// drun then asks for the core of the instruction set the CPU reports, through
// OPENBLAS_CORETYPE, which OpenBLAS reads only at load: tools/drun restarts
// itself once with it set, before anything else runs.
#pragma once
#include <string>

namespace drun::kernels::cpu {

// The core OpenBLAS chose ("SkylakeX", "Haswell", "Prescott", ...).
std::string blas_core();

// Who chose that core: "OpenBLAS" (from the CPU model), "drun" (restarted
// with OPENBLAS_CORETYPE, tools/drun) or "OPENBLAS_CORETYPE" (set before drun
// started: a user's or a machine's choice, kept even where the CPU has
// faster kernels than that core's).
std::string blas_core_chosen_by();

// The OPENBLAS_CORETYPE to run instead of `core` on a CPU whose best kernel
// variant is `isa` ("avx512", "avx2", "baseline"): "SkylakeX" or "Haswell"
// when `core` is one without AVX2 though the CPU has it; "" when `core` suits.
std::string better_blas_core(const std::string& core, const std::string& isa);

}  // namespace drun::kernels::cpu

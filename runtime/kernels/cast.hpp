// Conversion between the floating-point element types (float32, float16,
// bfloat16): n elements of x, of type `from`, into y, of type `to`, rounding
// to nearest even where `to` is narrower (kernels/half.hpp); a copy where the
// types are the same. One declaration for both backends: kernels/cpu/cast.cpp
// on host pointers, kernels/cuda/cast.cu on device pointers (the default
// stream, returning at once).
#pragma once
#include <cstdint>

#include "kernels/types.hpp"
#include "tensor/dtype.hpp"

namespace drun::kernels {

// Whether cast() converts from and to t.
constexpr bool castable(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

DRUN_CPU_AND_CUDA(void cast(const void* x, DType from, void* y, DType to, int64_t n);)

}  // namespace drun::kernels

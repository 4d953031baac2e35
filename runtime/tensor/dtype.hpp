// Element types and devices, apart from tensor.hpp so that the CUDA kernel
// files (nvcc) can name them without the rest of Tensor.
#pragma once
#include <cstddef>
#include <cstdint>

namespace drun {

// u8: data sets' pixels as stored (data::Dataset), converted per batch.
// f16 (IEEE binary16) and bf16 (bfloat16): mixed precision's copies of
// activations and kernels for the convolutions and GEMMs (tensor/half.hpp
// converts them).
enum class DType : uint8_t { f32, i32, u8, f16, bf16 };
enum class Device : uint8_t { cpu, cuda };

size_t dtype_size(DType t);
const char* dtype_name(DType t);

}  // namespace drun

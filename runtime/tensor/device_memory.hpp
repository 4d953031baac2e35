// Memory on devices other than the CPU. The tensor layer knows no GPU API:
// a backend provides these at link time (kernels/cuda/device_memory.cpp in a
// CUDA build, device_memory_absent.cpp otherwise, which refuses).
#pragma once
#include <cstddef>

#include "tensor/tensor.hpp"

namespace drun::device_memory {

void* allocate(Device device, size_t bytes);
void release(Device device, void* p, size_t bytes);
// Between any two devices (the GPU's unified addressing tells which); returns
// when the copy is done and after every kernel launched before it.
void copy(void* dst, const void* src, size_t bytes);
// Zeros in stream order (after the kernels launched before).
void zero(Device device, void* p, size_t bytes);
// Page-locks host memory so that GPUs copy from and to it at full speed
// (no bounce buffer); false where there is no GPU, and it stays as it was.
bool pin(void* p, size_t bytes);
void unpin(void* p);

}  // namespace drun::device_memory

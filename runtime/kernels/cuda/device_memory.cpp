// Device tensors' memory in a CUDA build: the process's caching pool, so a
// warm step allocates nothing from the driver.
#include "tensor/device_memory.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/device.hpp"
#include "tensor/tensor.hpp"

namespace drun::device_memory {

namespace {
void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(rc));
}
}  // namespace

void* allocate(Device, size_t bytes) {
  kernels::cuda::device_pool().count_tensor_change();
  return kernels::cuda::device_pool().allocate(bytes);
}

void release(Device, void* p, size_t bytes) {
  kernels::cuda::device_pool().count_tensor_change();
  kernels::cuda::device_pool().release(p, bytes);
}

void copy(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
}

void zero(Device, void* p, size_t bytes) {
  check(cudaMemsetAsync(p, 0, bytes, cudaStreamPerThread), "cudaMemsetAsync");
}

bool pin(void* p, size_t bytes) {
  if (kernels::cuda::device_count() == 0) return false;
  if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) == cudaSuccess) return true;
  cudaGetLastError();  // not pinned: still correct, only slower to copy
  return false;
}

void unpin(void* p) {
  cudaHostUnregister(p);
}

}  // namespace drun::device_memory

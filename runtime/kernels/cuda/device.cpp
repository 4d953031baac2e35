#include "kernels/cuda/device.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <bit>
#include <stdexcept>

namespace drun::kernels::cuda {

namespace {
void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(rc));
}
}  // namespace

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of a machine without a driver
    return 0;
  }
  return n;
}

std::string no_device_reason() {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    // Without any driver the runtime reports "driver version is insufficient",
    // which sends a user looking for a driver upgrade on a machine with no GPU.
    if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(driver);
    } else {
      return "no GPU found (no NVIDIA driver on this machine: libcuda.so.1 is not installed)";
    }
    if (rc == cudaErrorNoDevice) return "no GPU found (the NVIDIA driver sees no device)";
    return std::string("no GPU found (") + cudaGetErrorString(rc) + ")";
  }
  return n == 0 ? "no GPU found (the driver reports 0 devices)" : "";
}

void set_device(int index) {
  check(cudaSetDevice(index), "cudaSetDevice");
}

std::string device_name(int index) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  return prop.name;
}

void synchronize() {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

size_t DevicePool::size_class(size_t bytes) {
  return std::bit_ceil(std::max<size_t>(bytes, 256));
}

DevicePool::~DevicePool() {
  trim();
}

void* DevicePool::allocate(size_t bytes) {
  const size_t cls = size_class(bytes);
  auto& list = free_[cls];
  if (!list.empty()) {
    void* p = list.back();
    list.pop_back();
    return p;
  }
  void* p = nullptr;
  check(cudaMalloc(&p, cls), "cudaMalloc");
  ++driver_allocations_;
  return p;
}

void DevicePool::release(void* p, size_t bytes) {
  if (p) free_[size_class(bytes)].push_back(p);
}

void DevicePool::trim() {
  for (auto& [cls, list] : free_)
    for (void* p : list) cudaFree(p);
  free_.clear();
}

DevicePool& device_pool() {
  static DevicePool pool;
  return pool;
}

void copy_to_device(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
}

void copy_to_host(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}

}  // namespace drun::kernels::cuda

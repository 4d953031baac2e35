// The drun executable's side of the CUDA backend (cuda_module.hpp): the
// backend's functions, each forwarding to libdrun_cuda.so, which is loaded the
// first time one is needed. On a machine without the NVIDIA driver
// (libcuda.so.1) there is no GPU to count, and nothing is loaded: a CPU run
// keeps cuBLAS, cuDNN and NCCL out of its memory. Memory functions that only
// matter once GPU tensors exist (release, pin, unpin) do nothing before then.
#include <dlfcn.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernels/cuda_module.hpp"
#include "kernels/gpu_backend.hpp"
#include "tensor/device_memory.hpp"

namespace drun::kernels {
namespace {

std::atomic<const CudaModule*> loaded{nullptr};
void* handle = nullptr;  // the module's, once loaded; set once, under `once`
std::string load_error;  // why it did not load; set once, under `once`
std::once_flag once;

// Beside the executable (the build folder), else where it is installed.
std::string module_path() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto here = exe.parent_path() / "libdrun_cuda.so";
    if (std::filesystem::exists(here, ec)) return here.string();
  }
  return DRUN_CUDA_MODULE_INSTALLED;
}

void load() {
  const std::string path = module_path();
  // RTLD_NOW: a module that does not fit this executable fails here, whole.
  void* opened = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!opened) {
    load_error = "cannot load the CUDA backend: " + std::string(dlerror());
    return;
  }
  using Entry = const CudaModule* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(opened, "drun_cuda_module_v2"));
  if (!entry) {
    load_error = path + " is not drun's CUDA backend (no drun_cuda_module_v2)";
    return;
  }
  handle = opened;
  loaded = entry();  // loaded for good: never closed
}

const CudaModule& module() {
  std::call_once(once, load);
  if (const CudaModule* m = loaded.load()) return *m;
  throw std::runtime_error(load_error);
}

// Whether this machine has the NVIDIA driver, without keeping it loaded.
bool driver_present() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) return false;
  dlclose(driver);
  return true;
}

}  // namespace

bool cuda_built() {
  return true;
}

int cuda_device_count() {
  static const bool driver = driver_present();
  if (!driver) return 0;
  std::call_once(once, load);
  const CudaModule* m = loaded.load();
  return m ? m->device_count() : 0;
}

std::string cuda_device_name(int index) {
  return module().device_name(index);
}

std::shared_ptr<cuda::Context> make_cuda_context(int index) {
  if (!driver_present())
    throw std::runtime_error("GPU " + std::to_string(index) +
                             " does not exist (no GPU found: no NVIDIA driver on this machine, "
                             "libcuda.so.1 is not installed)");
  return module().make_context(index);
}

GpuBackend* gpu_backend() {
  return module().backend();
}

void* cuda_module_entry(const char* name) {
  module();  // loaded, or its error thrown
  void* entry = dlsym(handle, name);
  if (!entry) throw std::runtime_error("the CUDA backend module has no " + std::string(name));
  return entry;
}

}  // namespace drun::kernels

namespace drun::device_memory {

void* allocate(Device device, size_t bytes) {
  return kernels::module().allocate(device, bytes);
}
void release(Device device, void* p, size_t bytes) {
  if (const auto* m = kernels::loaded.load()) m->release(device, p, bytes);
}
void copy(void* dst, const void* src, size_t bytes) {
  kernels::module().copy(dst, src, bytes);
}
void zero(Device device, void* p, size_t bytes) {
  kernels::module().zero(device, p, bytes);
}
bool pin(void* p, size_t bytes) {
  const auto* m = kernels::loaded.load();
  return m && m->pin(p, bytes);
}
void unpin(void* p) {
  if (const auto* m = kernels::loaded.load()) m->unpin(p);
}

}  // namespace drun::device_memory

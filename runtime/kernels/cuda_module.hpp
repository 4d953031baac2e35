// The CUDA backend as a module that the drun executable loads only when a GPU
// is there to use (cuda_module_loader.cpp): libdrun_cuda.so, built from the
// same sources as the drun_backend library that tests link directly. Loading
// cuBLAS (with cuBLASLt), cuDNN and NCCL costs a process about 150 MB of
// resident memory at start (cuBLASLt's static tables alone 140 MB), which a
// run on the CPU has no use for. The module hands out the backend's entry
// points through one C function, so that the executable's own forwarders of
// the same names never call themselves. Parts of the module that belong to
// higher layers (NCCL's communicator, distributed/comm_nccl.hpp) hand out
// theirs through C functions of their own, which their forwarders find with
// cuda_module_entry: kernels/ knows nothing of them.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "tensor/tensor.hpp"

namespace drun::kernels {

namespace cuda {
class Context;
}
class GpuBackend;

struct CudaModule {
  void* (*allocate)(Device, size_t);
  void (*release)(Device, void*, size_t);
  void (*copy)(void*, const void*, size_t);
  void (*zero)(Device, void*, size_t);
  bool (*pin)(void*, size_t);
  void (*unpin)(void*);
  int (*device_count)();
  std::string (*device_name)(int);
  std::shared_ptr<cuda::Context> (*make_context)(int);
  GpuBackend* (*backend)();
};

// In the drun executable: the address of the C function `name` of the
// module, loaded first if it is not yet. Throws where the module cannot be
// loaded or has no such function.
void* cuda_module_entry(const char* name);

}  // namespace drun::kernels

// The module's entry for the backend; the version in its name changes with
// the table.
extern "C" const drun::kernels::CudaModule* drun_cuda_module_v2();

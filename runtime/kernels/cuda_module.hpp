// The CUDA backend as a module that the drun executable loads only when a GPU
// is there to use (cuda_module_loader.cpp): libdrun_cuda.so, built from the
// same sources as the drun_backend library that tests link directly. Loading
// cuBLAS (with cuBLASLt), cuDNN and NCCL costs a process about 150 MB of
// resident memory at start (cuBLASLt's static tables alone 140 MB), which a
// run on the CPU has no use for. The module hands out its entry points
// through one C function, so that the executable's own forwarders of the same
// names never call themselves.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "tensor/tensor.hpp"

namespace drun::distributed {
class Communicator;
class DeviceCommunicator;
}  // namespace drun::distributed

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
  std::unique_ptr<distributed::DeviceCommunicator> (*make_nccl)(distributed::Communicator&);
};

}  // namespace drun::kernels

// The module's one exported entry; the version in its name changes with the table.
extern "C" const drun::kernels::CudaModule* drun_cuda_module_v1();

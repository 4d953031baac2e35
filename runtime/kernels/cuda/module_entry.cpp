// libdrun_cuda.so's entry: the CUDA backend's functions as one table. The
// module is linked with -Bsymbolic, so these addresses are its own functions,
// not the executable's forwarders of the same names. (NCCL's communicator,
// also in the module, has its own entry: distributed/comm_nccl_entry.cpp.)
#include "kernels/cuda_module.hpp"
#include "kernels/gpu_backend.hpp"
#include "tensor/device_memory.hpp"

extern "C" __attribute__((visibility("default"))) const drun::kernels::CudaModule*
drun_cuda_module_v2() {
  namespace k = drun::kernels;
  namespace m = drun::device_memory;
  static const k::CudaModule table{m::allocate,
                                   m::release,
                                   m::copy,
                                   m::zero,
                                   m::pin,
                                   m::unpin,
                                   k::cuda_device_count,
                                   k::cuda_device_name,
                                   k::make_cuda_context,
                                   k::gpu_backend};
  return &table;
}

// NCCL between the workers' GPUs: the gradient sums of AllReduce
// when the gradients live on GPUs. The unique id NCCL needs to form its
// communicator travels through the MPI communicator (a broadcast from rank
// 0), so NCCL rides on the job MPI already started.
#pragma once
#include <cstdint>
#include <memory>

#include "distributed/comm.hpp"

namespace drun::distributed {

// Sums over ranks of float arrays in device memory, in place. The sums are
// queued on a stream of their own after every kernel already launched on the
// compute stream (so they overlap the rest of backward); wait_all() makes the
// compute stream wait for them. Neither call blocks the host.
class DeviceCommunicator {
 public:
  virtual ~DeviceCommunicator() = default;
  virtual void allreduce_sum_start(float* device_data, int64_t n) = 0;
  virtual void wait_all() = 0;
  // Start and wait, and the host waits too.
  virtual void allreduce_sum(float* device_data, int64_t n) = 0;
};

// NCCL over `mpi`'s ranks, each on its current CUDA device; null where drun
// is built without NCCL.
std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator& mpi);

using MakeDeviceCommunicator = std::unique_ptr<DeviceCommunicator> (*)(Communicator&);

}  // namespace drun::distributed

// NCCL's entry in the CUDA backend module, libdrun_cuda.so
// (kernels/cuda_module.hpp), which holds this communicator beside the
// backend: the module's own make_nccl_communicator (comm_nccl_entry.cpp). The
// drun executable, which loads the module rather than linking the backend,
// forwards its make_nccl_communicator there (comm_nccl_loader.cpp). The
// version in its name changes with the function's signature.
extern "C" drun::distributed::MakeDeviceCommunicator drun_nccl_module_v1();

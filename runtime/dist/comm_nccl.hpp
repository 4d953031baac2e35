// NCCL between the workers' GPUs (issue 8): the gradient sum of AllReduce on
// GPUs. The unique id NCCL needs to form its communicator travels through the
// MPI communicator (a broadcast from rank 0), so NCCL rides on the job MPI
// already started. Built where CUDA and NCCL are found (DRUN_HAVE_NCCL).
#pragma once
#include <cstdint>
#include <memory>

#include "dist/comm.hpp"

namespace drun::dist {

class NcclCommunicator {
 public:
  // Collective over `mpi`; each rank uses the current CUDA device (cudaSetDevice first).
  explicit NcclCommunicator(Communicator& mpi);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  // In-place sum over ranks of n floats in device memory; returns when done.
  void allreduce_sum(float* device_data, int64_t n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace drun::dist

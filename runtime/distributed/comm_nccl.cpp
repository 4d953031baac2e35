#include "distributed/comm_nccl.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace drun::distributed {

namespace {

void check(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + ncclGetErrorString(rc));
}
void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(rc));
}

class NcclCommunicator final : public DeviceCommunicator {
 public:
  explicit NcclCommunicator(Communicator& mpi) {
    ncclUniqueId id{};
    if (mpi.rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::string bytes(reinterpret_cast<const char*>(&id), sizeof(id));
    mpi.broadcast(bytes, 0);
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(&id));
    // Non-blocking: the kernels' stream (this thread's default stream,
    // kernels/cuda/device.hpp) must not wait for the sums by itself, or they
    // would not overlap backward.
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate");
    check(ncclCommInitRank(&comm_, mpi.size(), id, mpi.rank()), "ncclCommInitRank");
  }
  ~NcclCommunicator() override {
    if (comm_) ncclCommDestroy(comm_);
    cudaEventDestroy(ready_);
    cudaEventDestroy(done_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void allreduce_sum_start(float* device_data, int64_t n) override {
    check(cudaEventRecord(ready_, cudaStreamPerThread), "cudaEventRecord");
    check(cudaStreamWaitEvent(stream_, ready_, 0), "cudaStreamWaitEvent");
    check(ncclAllReduce(device_data, device_data, static_cast<size_t>(n), ncclFloat, ncclSum, comm_,
                        stream_),
          "ncclAllReduce");
  }
  void wait_all() override {
    check(cudaEventRecord(done_, stream_), "cudaEventRecord");
    check(cudaStreamWaitEvent(cudaStreamPerThread, done_, 0), "cudaStreamWaitEvent");
  }
  void allreduce_sum(float* device_data, int64_t n) override {
    allreduce_sum_start(device_data, n);
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator& mpi) {
  return std::make_unique<NcclCommunicator>(mpi);
}

}  // namespace drun::distributed

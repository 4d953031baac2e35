#include "dist/comm_nccl.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace drun::dist {

namespace {
void check(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + ncclGetErrorString(rc));
}
void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(rc));
}
}  // namespace

struct NcclCommunicator::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

NcclCommunicator::NcclCommunicator(Communicator& mpi) : impl_(std::make_unique<Impl>()) {
  ncclUniqueId id{};
  if (mpi.rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  std::string bytes(reinterpret_cast<const char*>(&id), sizeof(id));
  mpi.broadcast(bytes, 0);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(&id));
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(ncclCommInitRank(&impl_->comm, mpi.size(), id, mpi.rank()), "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void NcclCommunicator::allreduce_sum(float* device_data, int64_t n) {
  check(ncclAllReduce(device_data, device_data, static_cast<size_t>(n), ncclFloat, ncclSum,
                      impl_->comm, impl_->stream),
        "ncclAllReduce");
  check(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize");
}

}  // namespace drun::dist

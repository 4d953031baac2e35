// A build without NCCL: AllReduce on GPUs sums through host memory instead.
#include "dist/comm_nccl.hpp"

namespace drun::dist {

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator&) {
  return nullptr;
}

}  // namespace drun::dist

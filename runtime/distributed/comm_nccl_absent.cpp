// A build without NCCL: AllReduce on GPUs sums through host memory instead.
#include "distributed/comm_nccl.hpp"

namespace drun::distributed {

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator&) {
  return nullptr;
}

}  // namespace drun::distributed

// The drun executable's make_nccl_communicator: the one of the CUDA backend
// module (comm_nccl_entry.cpp), which kernels/cuda_module_loader.cpp loads
// the first time it is needed, as it does for the backend's own functions.
#include <memory>

#include "distributed/comm_nccl.hpp"
#include "kernels/cuda_module.hpp"

namespace drun::distributed {

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator& mpi) {
  using Entry = MakeDeviceCommunicator (*)();
  static const MakeDeviceCommunicator make =
      reinterpret_cast<Entry>(kernels::cuda_module_entry("drun_nccl_module_v1"))();
  return make(mpi);
}

}  // namespace drun::distributed

// libdrun_cuda.so's entry for NCCL (comm_nccl.hpp): the module's own
// make_nccl_communicator (comm_nccl.cpp, or comm_nccl_absent.cpp where NCCL
// was not found). The module is linked with -Bsymbolic, so this is its own
// function, not the executable's forwarder of the same name.
#include "distributed/comm_nccl.hpp"

extern "C" __attribute__((visibility("default"))) drun::distributed::MakeDeviceCommunicator
drun_nccl_module_v1() {
  return drun::distributed::make_nccl_communicator;
}

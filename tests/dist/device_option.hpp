// `--device cuda` among a multi-rank test's arguments: its workers train on
// a GPU each (the rank's index on its node), so that the same test checks
// the strategies on device memory. Built with the emulated backend
// (tests/unit/emulated) it runs in CI; with CUDA it needs a GPU per rank.
#pragma once
#include <cstdio>
#include <cstring>
#include <memory>

#include "distributed/comm.hpp"
#include "kernels/ops.hpp"

namespace drun::testing {

struct DeviceOption {
  bool gpu = false;
  std::shared_ptr<kernels::cuda::Context> context;
  kernels::Exec exec{Device::cpu, 1};
  bool missing = false;  // a GPU was asked for and this node has too few: skip (77)
};

inline DeviceOption device_option(int argc, char** argv, distributed::Communicator& comm) {
  DeviceOption d;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--device") == 0 && std::strcmp(argv[i + 1], "cuda") == 0)
      d.gpu = true;
  if (!d.gpu) return d;
  if (kernels::cuda_device_count() < comm.local_size()) {
    if (comm.rank() == 0)
      std::printf("skipped: %d GPU(s) for %d ranks on this node\n", kernels::cuda_device_count(),
                  comm.local_size());
    d.missing = true;
    return d;
  }
  d.context = kernels::make_cuda_context(comm.local_rank());
  d.exec = kernels::Exec{Device::cuda, 1, d.context.get()};
  return d;
}

}  // namespace drun::testing

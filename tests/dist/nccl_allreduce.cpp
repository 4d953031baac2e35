// NCCL between GPUs through the MPI job: each rank fills a device buffer with
// (rank + 1) * (i + 1), sums over ranks, and checks the exact result
// (n (n + 1) / 2 * (i + 1)). Without a GPU per rank it exits 77 (skipped).
#include <cstdio>
#include <vector>

#include "distributed/comm.hpp"
#include "distributed/comm_nccl.hpp"
#include "kernels/cuda/device.hpp"

using namespace drun;

int main(int argc, char** argv) {
  distributed::Communicator comm(&argc, &argv);
  const int gpus = kernels::cuda::device_count();
  int have = gpus > 0 ? 1 : 0;
  std::vector<int> all = comm.allgather(have);
  for (int h : all)
    if (!h) {
      if (comm.rank() == 0)
        std::printf("skipped: %s; NCCL was built but cannot run here\n",
                    kernels::cuda::no_device_reason().c_str());
      return 77;  // meson's "skipped"
    }
  kernels::cuda::set_device(comm.local_rank() % gpus);
  const auto nccl = distributed::make_nccl_communicator(comm);
  const int64_t n = 1 << 20;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>((comm.rank() + 1) * ((i % 100) + 1));
  kernels::cuda::DevicePool pool;
  void* d = pool.allocate(n * sizeof(float));
  kernels::cuda::copy_to_device(d, host.data(), n * sizeof(float));
  nccl->allreduce_sum(static_cast<float*>(d), n);
  kernels::cuda::copy_to_host(host.data(), d, n * sizeof(float));
  pool.release(d, n * sizeof(float));
  const float ranks = static_cast<float>(comm.size());
  int bad = 0;
  for (int64_t i = 0; i < n; ++i)
    if (host[i] != ranks * (ranks + 1) / 2 * static_cast<float>((i % 100) + 1)) ++bad;
  std::printf("rank %d: %d wrong of %lld\n", comm.rank(), bad, static_cast<long long>(n));
  return bad == 0 ? 0 : 1;
}

// jsrun's explicit resource file (ERF) for a role table: one resource set per
// rank, on the rank's host, with its share of the host's CPUs and, for a
// worker placed on a GPU, that one GPU. jsrun then starts rank i of the MPI
// job in resource set i and sets its CUDA_VISIBLE_DEVICES to that GPU alone
// (none for a parameter server), which is how IBM's POWER9 + V100 systems
// give each rank its GPU; mpirun is often not supported there.
#pragma once
#include <string>
#include <vector>

#include "launch/cluster.hpp"
#include "launch/placement.hpp"

namespace drun::launch {

// POWER9 nodes run SMT4 unless the job asks otherwise (bsub -alloc_flags
// smt1/smt2): ERF CPU indices count hardware threads.
constexpr int kDefaultHardwareThreadsPerCore = 4;

// The ERF text: a preamble (logical CPU indices: hardware threads counted
// across the sockets without the service cores; CPUs may be oversubscribed
// by parameter servers beside the workers) and one line per rank:
//   rank: 3: { hostname: h2; cpu: {0-27} ; gpu: {0} }
// A rank with t threads gets t cores' hardware threads, consecutive on its
// host; where a host's ranks ask for more cores than it has, they wrap
// around. Throws drun::UsageError for hardware_threads_per_core < 1.
std::string jsrun_erf(const std::vector<RankInfo>& ranks, const ClusterSpec& cluster,
                      int hardware_threads_per_core);

}  // namespace drun::launch

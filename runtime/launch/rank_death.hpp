// Which rank died, read from what the starter prints when a rank ends by a
// signal. The ranks cannot say it themselves (kill -9 leaves no last words);
// mpirun and srun both name the rank, in lines of their own:
//   Open MPI 4: "mpirun noticed that process rank 1 with PID 4242 on node box
//                exited on signal 9 (Killed)."
//   Slurm:      "srun: error: nodeb: task 1: Killed"
// and drun's stall inspector names a rank that stopped taking part:
//   "drun: stall: rank 1 (worker 0) on host nodeb has not been heard from..."
// A node that stops answering altogether is named by the starter too:
//   Slurm:      "srun: error: Node failure on nodeb"
//   Open MPI 4: "Remote daemon: [[57640,0],1] on node nodeb" (lost communication)
// and the ranks elsewhere that the starter then kills are its consequence.
#pragma once
#include <optional>
#include <string>

namespace drun::launch {

struct RankDeath {
  int rank = -1;
  std::string host;
  std::string how;         // "signal 9 (Killed)", "Killed", "Segmentation fault", "node failure"...
  bool node_lost = false;  // the whole node stopped answering (rank -1)
};

// The death a line reports, or nullopt (ranks that exit with an error code
// of their own are not deaths: they said what was wrong).
std::optional<RankDeath> parse_rank_death(const std::string& line);

}  // namespace drun::launch

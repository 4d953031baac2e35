// drun --max-restarts N: the launcher stays the parent of mpirun (or srun)
// instead of becoming it, passes signals on, and when a rank dies restarts
// the same command, which resumes from the newest checkpoint, up to N times.
//
// With --min-workers M a lost node (the starter's verdict), or a death or
// stall that names a host, drops that node: the job is placed again on the
// nodes left and restarted there while at least M workers remain
// (launch/resize.hpp). With fewer, a lost node ends the job; a rank's death
// restarts it where it ran, as without the option.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "launch/placement.hpp"

namespace drun::launch {

struct SuperviseOptions {
  int max_restarts = 0;
  int min_workers = 0;  // 0: restart on the same nodes
  // The ranks placed again on the nodes that are not `lost` (none when no
  // worker is left there), and the command that starts them.
  std::function<std::vector<RankInfo>(const std::vector<std::string>& lost)> placed_without;
  std::function<std::vector<std::string>(const std::vector<RankInfo>& ranks,
                                         const std::vector<std::string>& lost)>
      command_for;
  std::string model_dir;        // the script's (plan mode); where the newest checkpoint is
  std::vector<RankInfo> ranks;  // to name a dead rank's role
  std::string stall_dir;        // DRUN_STALL_DIR: each run gets its own below it
};

// Runs `cmd` until it succeeds, fails without a rank's death (an error a rank
// reported, a preemption's 75, a signal sent to drun), or dies more than
// max_restarts times; returns the last run's exit code.
int supervise(const std::vector<std::string>& cmd, const SuperviseOptions& opt);

}  // namespace drun::launch

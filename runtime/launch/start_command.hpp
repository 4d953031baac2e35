// The command that starts a job's ranks: mpirun (Open MPI), srun inside a
// Slurm allocation, or jsrun inside an LSF allocation (IBM's job step manager
// on POWER9 + GPU systems). A pure function from the role table to an argv,
// so unit tests see exactly what the launcher executes.
#pragma once
#include <string>
#include <vector>

#include "launch/placement.hpp"

namespace drun::launch {

enum class Starter { mpirun, srun, jsrun };

// What the launcher found about where it runs.
struct StarterSurroundings {
  bool in_slurm_job = false;  // SLURM_JOB_ID
  bool srun_found = false;
  bool in_lsf_job = false;  // LSB_JOBID
  bool jsrun_found = false;
};

// "auto" (srun inside a Slurm allocation where srun is found, jsrun inside an
// LSF allocation where jsrun is found, else mpirun), "srun", "jsrun" or
// "mpirun"; anything else throws drun::UsageError.
Starter choose_starter(const std::string& name, const ClusterSpec& cluster,
                       const StarterSurroundings& at);

struct StartOptions {
  std::string program = "mpirun";   // mpirun or srun, as given (--mpirun, or "srun")
  std::vector<std::string> passed;  // --mpi-arg: through to mpirun or srun
  bool name_hosts = true;           // mpirun: --host from the table (not on this machine alone)
  int tasks_granted = 0;            // srun: the allocation's tasks; more ranks need --overcommit
  std::string erf_path;             // jsrun: the explicit resource file (launch/jsrun_erf)
};

// argv up to, not including, the rank's own command (drun and its arguments).
// mpirun: every rank sees DRUN_PLACEMENT, DRUN_TTY, DRUN_STALL_DIR and
// DRUN_STALL_TIMEOUT (-x), ranks go host by
// host in table order. srun: `--mpi=pmix` (Debian's Open MPI wires up through
// PMIx; pmi2 and none do not work), the exact rank → host order by
// `--distribution=arbitrary` with the hosts repeated once per rank, the
// environment exported as it is. jsrun: `--erf_input` names the file that
// gives each rank its host, CPUs and GPU (jsrun exports the environment).
std::vector<std::string> start_command(Starter starter, const std::vector<RankInfo>& ranks,
                                       const StartOptions& opt);

}  // namespace drun::launch

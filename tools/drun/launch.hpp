// The launcher's half of drun: outside an MPI job it reads the cluster, runs
// the script once in plan mode to learn its strategy, places the ranks and
// starts them through mpirun or srun; inside one it gives this rank its role.
#pragma once
#include <string>
#include <vector>

#include "launch/placement.hpp"
#include "train/context.hpp"

namespace drun::launch {

struct Request {
  std::string script;
  std::vector<std::string> script_args;
  int ranks = 0;  // -np; 0: not given
  std::string mpirun = "mpirun";
  std::string launcher = "auto";  // --launcher: auto, srun or mpirun
  std::vector<std::string> mpi_args;
  std::string hostfile;
  int workers_per_node = -1, gpus_per_node = -1, ps_per_node = -1;
  int ps = -1;                // --ps: parameter servers in all; -1: not given
  int threads = 0;            // --threads-per-rank; 0: the node's cores shared out
  int max_restarts = 0;       // --max-restarts: restarts of the job after a rank dies
  int min_workers = 0;        // --min-workers: go on without a lost node while this many remain
  double stall_timeout = 60;  // --stall-timeout: seconds; 0: no stall inspector
  bool dry_run = false;
  bool evaluator = false;  // --evaluator: one process beside a training job
  std::string data_dir;
  bool quiet = false;
  std::string device = "auto";  // auto (a GPU where this rank has one), cpu or cuda
  std::string timeline;         // --timeline: the trace file every rank's fits write into
};

// Whether this request needs more than one process (or a dry run).
bool needs_launch(const Request& r, const launch::ClusterSpec& cluster);

// Plans, then either prints the plan (dry run, returns 0) or becomes mpirun
// or srun (returns only on failure); with max_restarts, stays their parent
// and returns the job's exit code (supervise.hpp). `plan_ctx` is a context for the plan-mode run.
int launch(const Request& r, const launch::ClusterSpec& cluster, train::Context plan_ctx);

}  // namespace drun::launch

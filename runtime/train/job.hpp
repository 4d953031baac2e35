// A process's start-up, the one for the drun executable, for programs that
// embed the runtime (libdrun's drun::Runtime) and for the Lua module
// (drun/core.so): its thread budget, data directory, output mode, its place
// in an MPI job (communicators, role, stall inspector), and where its kernels
// run. Only the launcher's half of drun (placing and starting the ranks of a
// job) is not here: it is the command's, in tools/drun.
#pragma once
#include <memory>
#include <string>

#include "distributed/comm.hpp"
#include "distributed/stall_inspector.hpp"
#include "train/context.hpp"

namespace drun::train {

// The threads a process asked for: `flag` (--threads, RuntimeSettings::threads)
// when above 0, else DRUN_THREADS (`env`; unset, empty or 0: not given), else
// 0: nothing asked. UsageError when DRUN_THREADS is not a whole number.
int requested_threads(int flag, const char* env);

// How many compute threads a process takes, by one rule wherever it starts
// (drun alone, a rank of a job that drun or mpirun started, an embedding
// program, the Lua module): requested_threads(flag, env) when something was
// asked, else `placed` when above 0 (the launcher's placement of this rank,
// which made the same choice for it), else the node's `cores` shared by the
// `ranks_on_node` ranks there (launch::cores_per_rank).
int thread_count(int flag, const char* env, int placed, int cores, int ranks_on_node);

// The device index of the GPU the placement gave a rank (-1: none). A starter
// that leaves each rank exactly one visible GPU (jsrun's resource sets,
// Slurm's --gpus-per-task) makes that GPU device 0, whatever its number on
// the node; otherwise the placement's index counts the visible GPUs.
int visible_gpu(int placed, const char* cuda_visible_devices);

// Inside a job: this rank's role from DRUN_PLACEMENT (the launcher's, or,
// when absent, worker `rank` of `size` with worker 0 the chief, on GPU
// `local_rank` mod the GPUs it sees: ranks that mpirun or jsrun started
// without drun), exported as TF_CONFIG, DRUN_ROLE and DRUN_TASK_INDEX and
// written into ctx. Returns the threads the placement gave this rank (0
// without one).
int take_role(Context& ctx, int rank, int size, int local_rank = 0);

// Where this process's kernels run, `device` being auto (its GPU: the
// placement's, or the one GPU of a single process), cpu or cuda (UsageError
// when there is no such GPU). Parameter servers and the evaluator serve from
// host memory whatever the workers use. The GPU's context opens here, once.
void choose_device(Context& ctx, const std::string& device);

// The runtime context of this process and what it owns: one process, or, when
// it was started as a rank of an MPI job (mpirun, srun), that rank with its
// role, its communicators (MPI_Init here, MPI_Finalize in the destructor) and,
// when the launcher asked for one, its stall inspector. A start-up error in a
// job of several ranks ends the whole job (one line naming this rank, then
// MPI_Abort); alone, it is thrown.
class Process {
 public:
  struct Settings {
    int threads = 0;              // --threads; 0: see thread_count
    std::string data_dir;         // "": DRUN_DATA_DIR, else each reader's default
    bool quiet = false;           // no progress output (ranks other than the chief never draw it)
    std::string device = "auto";  // where kernels run: auto, cpu or cuda (choose_device)
    bool join_mpi = true;         // false: one process even under mpirun
    bool evaluator = false;       // drun --evaluator: one process beside a job, no MPI
    bool preemption_from_start = false;  // SIGTERM/SIGUSR1 ask for preemption from now on,
                                         // not from the first fit (drun's ranks)
  };
  Process(int* argc, char*** argv, const Settings& settings);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  Context& context() { return ctx_; }
  const Context& context() const { return ctx_; }

  // The process's exit code after its work ended with `exit_code`: a failed
  // rank ends the whole job at once (MPI_Abort) rather than leave the others
  // waiting in a collective; a preempted job's ranks all stop at the same
  // step and exit by themselves.
  int finish(int exit_code);

 private:
  void join_job(int* argc, char*** argv, const Settings& settings);
  void act_as_evaluator();

  std::unique_ptr<distributed::Communicator> comm_, workers_;
  std::unique_ptr<distributed::StallInspector> inspector_;
  Context ctx_;
};

}  // namespace drun::train

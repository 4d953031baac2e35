// A process's place in an MPI job, shared by the drun executable and programs
// that embed the runtime (libdrun's drun::Runtime): the role a rank takes,
// and the context of a process that joins a job, or runs alone, by itself.
#pragma once
#include <memory>
#include <string>

#include "distributed/comm.hpp"
#include "train/context.hpp"

namespace drun::train {

// Inside a job: this rank's role from DRUN_PLACEMENT (the launcher's, or,
// when absent, worker `rank` of `size` with worker 0 the chief), exported as
// TF_CONFIG, DRUN_ROLE and DRUN_TASK_INDEX and written into ctx.
void take_role(Context& ctx, int rank, int size);

// The runtime context of an embedding program: one process, or, when it was
// started as a rank of an MPI job (mpirun, srun), that rank with its role.
// It owns MPI's lifetime there (MPI_Init here, MPI_Finalize in the destructor).
class EmbeddedProcess {
 public:
  struct Settings {
    int threads = 0;       // 0: DRUN_THREADS, else the node's cores shared by its ranks
    std::string data_dir;  // "": DRUN_DATA_DIR, else each reader's default
    bool quiet = false;    // no progress output
    bool join_mpi = true;  // false: one process even under mpirun
  };
  EmbeddedProcess(int* argc, char*** argv, const Settings& settings);
  ~EmbeddedProcess();
  EmbeddedProcess(const EmbeddedProcess&) = delete;
  EmbeddedProcess& operator=(const EmbeddedProcess&) = delete;

  Context& context() { return ctx_; }
  const Context& context() const { return ctx_; }

 private:
  std::unique_ptr<distributed::Communicator> comm_, workers_;
  Context ctx_;
};

}  // namespace drun::train

// Context: the runtime's one piece of process-wide state, owned by main and
// handed to the Lua bindings: thread budget, data directory, output mode.
#pragma once
#include <memory>
#include <string>

#include "base/options.hpp"
#include "distributed/comm.hpp"
#include "kernels/ops.hpp"

namespace drun::train {

struct Context {
  kernels::Exec exec;       // where kernels run and with how many threads
  std::string data_dir;     // --data-dir / DRUN_DATA_DIR; empty: each reader's default
  bool tty = false;         // stdout is a terminal: draw a progress bar
  bool quiet = false;       // no progress output at all
  std::string module_root;  // where drun/*.lua live, to tell user frames from ours
  std::string models_root;  // the Lua model zoo (models/*.lua), on package.path
  distributed::Communicator* comm = nullptr;     // set when this process is a rank of an MPI job
  distributed::Communicator* workers = nullptr;  // the job's workers, without its parameter servers
  std::string label;           // "worker 1" on a rank other than the chief, for messages
  std::string role = "chief";  // chief, worker or ps (placement)
  int task_index = 0;
  int gpu = -1;  // this rank's GPU on its node (placement); -1: none
  std::shared_ptr<kernels::cuda::Context> cuda;  // that GPU's context, when kernels run there
  json tf_config;  // this rank's TF_CONFIG, when placed by the launcher
  // Plan mode (the launcher's first look at a script, and --dry-run): fit and
  // the other heavy calls record what they would do and return at once; data
  // sets are not read.
  bool plan = false;
  int exit_code = 0;  // set before an error that must end the process with a code of its own
  json plan_record = json::object();
};

}  // namespace drun::train

// Context: the runtime's one piece of process-wide state, owned by main and
// handed to the Lua bindings: thread budget, data directory, output mode.
#pragma once
#include <string>

#include "dist/comm.hpp"
#include "kernels/ops.hpp"

namespace drun::train {

struct Context {
  kernels::Exec exec;                  // where kernels run and with how many threads
  std::string data_dir;                // --data-dir / DRUN_DATA_DIR; empty: each reader's default
  bool tty = false;                    // stdout is a terminal: draw a progress bar
  bool quiet = false;                  // no progress output at all
  std::string module_root;             // where drun/*.lua live, to tell user frames from ours
  std::string models_root;             // the Lua model zoo (models/*.lua), on package.path
  dist::Communicator* comm = nullptr;  // set when this process is a rank of an MPI job
  std::string label;                   // "worker 1" on a rank other than the chief, for messages
};

}  // namespace drun::train

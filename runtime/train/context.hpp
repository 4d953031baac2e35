// Context: the runtime's one piece of process-wide state, owned by main,
// filled by the launcher (role, placement) and read by the runtime's entry
// points (train/run_fit) through the Lua bindings: thread budget, data
// directory, output mode, this rank's role and communicators, plan mode.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "base/options.hpp"
#include "distributed/comm.hpp"
#include "distributed/strategy_spec.hpp"
#include "kernels/ops.hpp"

namespace drun::train {

// What a fit in plan mode would have run: what the launcher places ranks for.
struct PlannedFit {
  distributed::StrategySpec strategy;
  std::string model_summary;
  std::string model_dir;  // where its checkpoints go ("": none); the launcher's restarts read it
};

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
  std::string role = "chief";  // chief, worker, ps (placement) or evaluator (--evaluator)
  int task_index = 0;
  int gpu = -1;  // this rank's GPU on its node (placement); -1: none
  std::shared_ptr<kernels::cuda::Context> cuda;  // that GPU's context, when kernels run there
  json tf_config;  // this rank's TF_CONFIG, when placed by the launcher
  // Plan mode (the launcher's first look at a script, and --dry-run): fit and
  // the other heavy calls record what they would do and return at once; data
  // sets are not read.
  bool plan = false;
  std::optional<PlannedFit> planned_fit;  // plan mode: the last fit the script reached
  // --timeline: every fit writes its Chrome trace there (docs/timeline.md); empty: none.
  std::string timeline;

  // The job's workers and this one's index among them (1 and 0 alone).
  int worker_count() const { return workers ? workers->size() : 1; }
  int worker_rank() const { return workers ? workers->rank() : 0; }
};

}  // namespace drun::train

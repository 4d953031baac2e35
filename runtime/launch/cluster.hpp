// The cluster a job runs in, read from the environment the scheduler left
// (Slurm, LSF/jsrun, PBS), from an Open MPI hostfile, or this machine alone.
// Pure: it reads an Environment value and files, never calls MPI, so the same
// code serves a real job and `drun --dry-run` on a laptop with a recorded
// environment.
#pragma once
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace drun::launch {

struct Node {
  std::string host;
  int gpus = 0;   // GPUs the job may use on this node
  int cores = 0;  // cores for the job's ranks on this node; 0 when unknown
  int slots = 0;  // slots the scheduler or hostfile granted; 0 when unknown
  // Ranks the user asked the scheduler for on this node (Slurm's -n or
  // --ntasks-per-node, LSF's and PBS's slots on nodes without GPUs); 0 when
  // the user asked for nodes only. Placement takes it as the node's rank count.
  int tasks = 0;
};

struct ClusterSpec {
  std::string source;  // "slurm", "lsf", "pbs", "hostfile" or "local"
  std::vector<Node> nodes;
};

// Environment variables as a value, so tests and --dry-run can pass a recorded
// or made-up environment instead of the process's own.
class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}
  // Environment({{"SLURM_JOB_NODELIST", "node[1-3]"}, ...}) in tests.
  Environment(std::initializer_list<std::pair<const std::string, std::string>> vars)
      : vars_(vars) {}
  static Environment from_process();

  // The value, or nullopt when the variable is not set (set but empty is "").
  std::optional<std::string> get(const std::string& name) const;
  // The value when set and not empty.
  std::optional<std::string> nonempty(const std::string& name) const;
  void set(const std::string& name, std::string value) { vars_[name] = std::move(value); }
  const std::map<std::string, std::string>& vars() const { return vars_; }

 private:
  std::map<std::string, std::string> vars_;
};

struct DiscoverOptions {
  std::string hostfile;    // --hostfile; used when no scheduler allocation is found
  int gpus_per_node = -1;  // --gpus-per-node; -1: unknown, read the environment
  int local_cores = 0;     // cores of this machine; also the guess for nodes whose count is unknown
  std::string local_host;  // this machine's name; "localhost" when empty
  int local_gpus = 0;      // the CUDA runtime's device count where CUDA is built in
};

// The first source that is present wins: Slurm allocation
// (SLURM_JOB_NODELIST, else SLURM_STEP_NODELIST), LSF (LSB_MCPU_HOSTS, else
// LSB_HOSTS; launch hosts batch* and login* are skipped), PBS (PBS_NODEFILE),
// opt.hostfile, this machine. Every node gets the same GPU count:
// opt.gpus_per_node if >= 0, else CUDA_VISIBLE_DEVICES, else
// SLURM_GPUS_ON_NODE, else 0. Nodes whose cores the source does not say get
// opt.local_cores (the nodes of one allocation are usually alike). Tasks:
// Slurm's only when the user asked for them (SLURM_NTASKS or
// SLURM_NTASKS_PER_NODE set; spread as SLURM_TASKS_PER_NODE says, else
// evenly); LSF's and PBS's slots on nodes without GPUs (there slots are
// what `bsub -n` and `mpiprocs` ask for; on GPU nodes they usually count
// cores, and one worker per GPU stays the rule). Malformed variables and
// files throw drun::UsageError naming them.
ClusterSpec discover_cluster(const Environment& env, const DiscoverOptions& opt);

// Slurm's compressed host lists: "node[1-3]", "node[10,20-23]", "a1,b[01-02]",
// "rack[1-2]-n[1-2]" (every combination). Zero padding of a range's lower bound
// is kept ("[08-10]" gives 08, 09, 10). Throws drun::UsageError when malformed.
std::vector<std::string> expand_slurm_nodelist(const std::string& list);

// GPUs named by a CUDA_VISIBLE_DEVICES value: the count of entries up to the
// first "-1" (CUDA ignores devices after an invalid one); "" and "NoDevFiles"
// (set by some schedulers on GPU-less nodes) give 0.
int count_visible_devices(const std::string& value);

}  // namespace drun::launch

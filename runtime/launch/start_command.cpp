#include "launch/start_command.hpp"

#include <stdexcept>

#include "base/options.hpp"

namespace drun::launch {
namespace {

// "a:2,b:2": the hosts in rank order with their rank counts, for --host.
std::string host_counts(const std::vector<RankInfo>& ranks) {
  std::vector<std::pair<std::string, int>> hosts;
  for (const auto& r : ranks) {
    if (hosts.empty() || hosts.back().first != r.host) hosts.push_back({r.host, 0});
    ++hosts.back().second;
  }
  std::string out;
  for (const auto& [h, n] : hosts) out += (out.empty() ? "" : ",") + h + ":" + std::to_string(n);
  return out;
}

// "a,a,b": one host per rank, which srun's arbitrary distribution follows.
std::string host_per_rank(const std::vector<RankInfo>& ranks) {
  std::string out;
  for (const auto& r : ranks) out += (out.empty() ? "" : ",") + r.host;
  return out;
}

}  // namespace

Starter choose_starter(const std::string& name, const ClusterSpec& cluster,
                       const StarterSurroundings& at) {
  if (name == "mpirun") return Starter::mpirun;
  if (name == "srun") {
    if (!at.in_slurm_job)
      throw UsageError("--launcher srun: not inside a Slurm allocation (no SLURM_JOB_ID)");
    if (!at.srun_found) throw UsageError("--launcher srun: srun is not on PATH");
    return Starter::srun;
  }
  if (name == "jsrun") {
    if (!at.in_lsf_job)
      throw UsageError("--launcher jsrun: not inside an LSF allocation (no LSB_JOBID)");
    if (!at.jsrun_found) throw UsageError("--launcher jsrun: jsrun is not on PATH");
    if (cluster.source != "lsf")
      throw UsageError("--launcher jsrun: the cluster was read from " + cluster.source +
                       ", not from LSF's LSB_MCPU_HOSTS");
    return Starter::jsrun;
  }
  if (name != "auto")
    throw UsageError("--launcher '" + name + "': expected auto, srun, jsrun or mpirun");
  if (cluster.source == "slurm" && at.in_slurm_job && at.srun_found) return Starter::srun;
  if (cluster.source == "lsf" && at.in_lsf_job && at.jsrun_found) return Starter::jsrun;
  return Starter::mpirun;
}

std::vector<std::string> start_command(Starter starter, const std::vector<RankInfo>& ranks,
                                       const StartOptions& opt) {
  const std::string n = std::to_string(ranks.size());
  std::vector<std::string> cmd;
  if (starter == Starter::jsrun) {
    if (opt.erf_path.empty())
      throw std::logic_error("start_command: jsrun without a resource file");
    cmd = {opt.program, "--erf_input", opt.erf_path};
  } else if (starter == Starter::srun) {
    cmd = {opt.program, "--mpi=pmix", "--ntasks=" + n, "--distribution=arbitrary",
           "--nodelist=" + host_per_rank(ranks), "--export=ALL",
           // One rank's failure ends the step; a preempted job's ranks all exit
           // 75 after the chief's checkpoint, so this never cuts one short.
           "--kill-on-bad-exit=1"};
    // Parameter servers on top of the tasks asked for (-np, --ps) share CPUs.
    if (opt.tasks_granted > 0 && static_cast<int>(ranks.size()) > opt.tasks_granted)
      cmd.push_back("--overcommit");
  } else {
    cmd = {opt.program,
           "--allow-run-as-root",
           "--oversubscribe",
           "--bind-to",
           "none",
           "-np",
           n,
           "-x",
           "DRUN_PLACEMENT",
           "-x",
           "DRUN_TTY",
           "-x",
           "DRUN_STALL_DIR",
           "-x",
           "DRUN_STALL_TIMEOUT"};
    if (opt.name_hosts) cmd.insert(cmd.end(), {"--host", host_counts(ranks)});
  }
  cmd.insert(cmd.end(), opt.passed.begin(), opt.passed.end());
  return cmd;
}

}  // namespace drun::launch

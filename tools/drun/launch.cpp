#include "launch.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "command_line.hpp"
#include "distributed/strategy_spec.hpp"
#include "launch/jsrun_erf.hpp"
#include "launch/resize.hpp"
#include "launch/start_command.hpp"
#include "runner.hpp"
#include "supervise.hpp"
#include "train/job.hpp"
#include "train/run_setup.hpp"

namespace drun::launch {

namespace {

// Runs the script in plan mode; stdout is silenced unless `show` (dry run).
int plan(train::Context& ctx, const Request& r, bool show) {
  ctx.plan = true;
  ctx.quiet = true;
  std::fflush(stdout);
  const int saved = show ? -1 : dup(STDOUT_FILENO);
  if (!show) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    close(null);
  }
  const int rc = lua::run_script(ctx, r.script, r.script_args);
  std::fflush(stdout);
  if (!show) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
  }
  return rc;
}

std::string hostname_of_launcher() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// Heartbeat directories (<host>-<launcher pid>[-<restart>]) of earlier
// launches from this host whose launcher is gone: a job that ended by an
// error or a kill leaves its ranks' heartbeat files behind.
void sweep_stale_heartbeats(const std::filesystem::path& base, const std::string& host) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(host + "-", 0) != 0) continue;
    const std::string pid =
        name.substr(host.size() + 1, name.find('-', host.size() + 1) - (host.size() + 1));
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos)
      continue;
    if (kill(static_cast<pid_t>(std::stoi(pid)), 0) != 0 && errno == ESRCH)
      std::filesystem::remove_all(entry.path(), ec);
  }
}

// 60 → "60", 2.5 → "2.5": for the environment.
std::string fmt_seconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// Whether `program` names an executable, directly or on PATH.
bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0;;) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) return false;
    start = end + 1;
  }
}

// ERF CPU indices count hardware threads: DRUN_SMT for a job that asked
// for another SMT mode than POWER9's SMT4.
int hardware_threads_per_core() {
  const char* smt = std::getenv("DRUN_SMT");
  if (!smt || !*smt) return kDefaultHardwareThreadsPerCore;
  const std::string text = smt;
  if (text.size() > 2 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) < 1)
    throw UsageError("DRUN_SMT: expected hardware threads per core (1, 2, 4 or 8), got '" + text +
                     "'");
  return std::stoi(text);
}

// The tasks the scheduler granted in all (0: not said).
int tasks_granted(const launch::ClusterSpec& cluster) {
  int n = 0;
  for (const auto& node : cluster.nodes) n += node.tasks;
  return n;
}

}  // namespace

bool needs_launch(const Request& r, const launch::ClusterSpec& cluster) {
  if (r.dry_run || r.ranks > 1 || cluster.nodes.size() > 1 || r.ps_per_node > 0 || r.ps > 0 ||
      r.workers_per_node > 1 || (!cluster.nodes.empty() && cluster.nodes[0].tasks > 1))
    return true;
  return !cluster.nodes.empty() && cluster.nodes[0].gpus > 1;
}

int launch(const Request& r, const launch::ClusterSpec& cluster, train::Context ctx) {
  // The script's own exit code: 2 after a usage error, as in one process.
  if (const int rc = plan(ctx, r, r.dry_run); rc != 0) return rc;
  // The script's strategy, as its fit in plan mode parsed it (none reached: the default).
  const auto spec = ctx.planned_fit ? ctx.planned_fit->strategy : distributed::StrategySpec{};
  launch::PlacementOptions opt;
  opt.needs_ps = spec.uses_servers();
  opt.ps_per_node = r.ps_per_node;
  opt.total_ps = r.ps;
  opt.workers_per_node = r.workers_per_node;
  opt.total_workers = r.ranks > 0 ? r.ranks : -1;
  // --threads or DRUN_THREADS, as each rank would read them (train::thread_count).
  opt.threads_per_rank = train::requested_threads(r.threads, std::getenv("DRUN_THREADS"));
  const auto ranks = launch::place(cluster, opt);
  for (const auto& line : launch::oversubscribed(cluster, ranks))
    std::cerr << "drun: warning: " << line << "\n";
  launch::StarterSurroundings at;
  at.in_slurm_job = std::getenv("SLURM_JOB_ID") != nullptr;
  at.srun_found = on_path("srun");
  at.in_lsf_job = std::getenv("LSB_JOBID") != nullptr;
  at.jsrun_found = on_path("jsrun");
  const launch::Starter starter = launch::choose_starter(r.launcher, cluster, at);
  const std::string program = starter == launch::Starter::srun    ? "srun"
                              : starter == launch::Starter::jsrun ? "jsrun"
                                                                  : r.mpirun;
  const std::string erf = starter == launch::Starter::jsrun
                              ? jsrun_erf(ranks, cluster, hardware_threads_per_core())
                              : "";
  const int ps = launch::servers_in(ranks);

  if (r.dry_run) {
    std::cout << "\nstrategy: " << spec.name << " " << spec.options.dump() << "\n";
    if (!ctx.planned_fit)
      std::cout << "(the script trains nothing: no fit, train or Experiment:run was reached)\n";
    std::cout << "cluster: " << cluster.source << ", " << cluster.nodes.size() << " node(s); "
              << ranks.size() << " ranks: " << ranks.size() - ps << " worker(s), " << ps
              << " parameter server(s), started by " << program << "\n"
              << launch::placement_table(ranks)
              << "TF_CONFIG of rank 0: " << launch::tf_config(ranks, 0).dump() << "\n";
    if (!erf.empty()) std::cout << "jsrun resource sets (--erf_input):\n" << erf;
    return 0;
  }
  if (ps > 0 && !spec.uses_servers())
    throw UsageError("strategy " + spec.name +
                     " uses no parameter servers; drop --ps-per-node and --ps");

  const std::string model_dir = ctx.planned_fit ? ctx.planned_fit->model_dir : "";
  if (!model_dir.empty() && std::filesystem::exists(model_dir + "/checkpoint"))
    train::check_setup(model_dir, {static_cast<int>(ranks.size()) - ps, spec.name, 0});
  // The stall inspector's heartbeats: under the model_dir, which every node
  // sees (else a temporary directory, which only this node's ranks share).
  const std::string stall_dir =
      (model_dir.empty() ? std::filesystem::temp_directory_path().string() : model_dir) +
      "/.drun-stall/" + hostname_of_launcher() + "-" + std::to_string(getpid());
  sweep_stale_heartbeats(std::filesystem::path(stall_dir).parent_path(), hostname_of_launcher());
  setenv("DRUN_STALL_DIR", stall_dir.c_str(), 1);
  setenv("DRUN_STALL_TIMEOUT", fmt_seconds(r.stall_timeout).c_str(), 1);
  // Every rank reads its role from the same table.
  setenv("DRUN_PLACEMENT", launch::placement_json(ranks).dump().c_str(), 1);
  // Ranks write through mpirun's pseudo-terminals: whether to draw a progress
  // bar is the launcher's terminal's question, not theirs.
  setenv("DRUN_TTY", ctx.tty ? "1" : "0", 1);
  // The command that starts `placed` on `nodes`: for the first start, and
  // again on the nodes left after one is lost (--min-workers).
  const auto command_for = [&](const std::vector<launch::RankInfo>& placed,
                               const launch::ClusterSpec& nodes) {
    launch::StartOptions start;
    start.program = program;
    start.passed = r.mpi_args;
    start.name_hosts = nodes.source != "local";
    start.tasks_granted = tasks_granted(nodes);
    if (starter == launch::Starter::jsrun) {
      // Beside the heartbeats, so the sweep of a later launch removes it.
      std::filesystem::create_directories(stall_dir);
      start.erf_path = stall_dir + "/ranks.erf";
      std::ofstream(start.erf_path) << jsrun_erf(placed, nodes, hardware_threads_per_core());
    }
    // mpirun passes on only the variables it is told to.
    if (starter == launch::Starter::mpirun && std::getenv("DRUN_RESIZED"))
      start.passed.insert(start.passed.begin(), {"-x", "DRUN_RESIZED"});
    std::vector<std::string> cmd = launch::start_command(starter, placed, start);
    const int servers = launch::servers_in(placed);
    // In a batch job's log: what was started where, and how.
    if (nodes.source != "local") {
      std::string hosts, line;
      for (const auto& x : placed) hosts += (hosts.empty() ? "" : ", ") + x.host;
      for (const auto& a : cmd) line += (line.empty() ? "" : " ") + a;
      std::cerr << "drun: " << placed.size() << " ranks (" << servers << " ps, "
                << placed.size() - servers << " workers) on " << hosts << " (" << nodes.source
                << "): " << line << "\n";
    }
    cmd.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
    const auto passed = cli::rank_arguments(r);
    cmd.insert(cmd.end(), passed.begin(), passed.end());
    cmd.push_back(r.script);
    cmd.insert(cmd.end(), r.script_args.begin(), r.script_args.end());
    return cmd;
  };
  std::vector<std::string> cmd = command_for(ranks, cluster);
  if (r.max_restarts > 0) {
    launch::SuperviseOptions watch;
    watch.max_restarts = r.max_restarts;
    watch.min_workers = r.min_workers;
    watch.model_dir = model_dir;
    watch.ranks = ranks;
    watch.stall_dir = stall_dir;
    // The cluster without the lost nodes, and -np without their workers.
    const auto without = [&](const std::vector<std::string>& lost) {
      std::pair<launch::ClusterSpec, launch::PlacementOptions> left{cluster, opt};
      for (const auto& host : lost) {
        left.first = launch::without_host(left.first, host);
        if (left.second.total_workers > 0)
          for (const auto& x : ranks) left.second.total_workers -= x.host == host && x.role != "ps";
      }
      return left;
    };
    watch.placed_without = [&](const std::vector<std::string>& lost) {
      const auto [nodes, options] = without(lost);
      if (nodes.nodes.empty() || options.total_workers == 0) return std::vector<launch::RankInfo>{};
      try {
        return launch::place(nodes, options);
      } catch (const UsageError&) {  // no workers left there
        return std::vector<launch::RankInfo>{};
      }
    };
    watch.command_for = [&](const std::vector<launch::RankInfo>& placed,
                            const std::vector<std::string>& lost) {
      return command_for(placed, without(lost).first);
    };
    return launch::supervise(cmd, watch);
  }
  std::vector<char*> argv;
  for (auto& s : cmd) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(argv[0], argv.data());
  std::cerr << "drun: cannot start " << program << ": " << std::strerror(errno)
            << (starter != launch::Starter::mpirun
                    ? " (or pass --launcher mpirun)\n"
                    : " (install Open MPI: apt-get install openmpi-bin, or pass --mpirun PATH)\n");
  return 1;
}

}  // namespace drun::launch

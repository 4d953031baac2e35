// drun: runs a Lua experiment script, as one process or as a job of many.
// This file parses the command line and decides which: a process's start-up
// (threads, role, communicators, device) is the runtime's (train/job),
// placing and starting ranks the launcher's (launch.cpp).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/install_layout.hpp"
#include "keras/keras_h5.hpp"
#include "kernels/cpu/blas_core.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/platform.hpp"
#include "launch.hpp"
#include "launch/cluster.hpp"
#include "runner.hpp"
#include "train/job.hpp"

#ifndef DRUN_LUA_DIR
#define DRUN_LUA_DIR ""
#endif
#ifndef DRUN_MODELS_DIR
#define DRUN_MODELS_DIR ""
#endif
#ifndef DRUN_VERSION
#define DRUN_VERSION "unknown"
#endif

namespace {

// An installed drun (PREFIX/bin/drun) reads the Lua modules and models of
// its own prefix, wherever that was moved; one in a build tree those of the
// source tree it was built from. The environment overrides either.
std::optional<std::filesystem::path> own_prefix() {
  return drun::install_prefix_of(drun::self_executable(), drun::installed_bin_dir());
}

std::string models_root() {
  if (const char* env = std::getenv("DRUN_MODELS_PATH")) return env;
  if (const auto prefix = own_prefix()) return (*prefix / drun::installed_models_dir()).string();
  return std::filesystem::weakly_canonical(DRUN_MODELS_DIR).string();
}

std::string module_root() {
  if (const char* env = std::getenv("DRUN_LUA_PATH")) return env;
  if (const auto prefix = own_prefix()) return (*prefix / drun::installed_lua_dir()).string();
  return std::filesystem::weakly_canonical(DRUN_LUA_DIR).string();
}

// drun's options that take a separate value.
bool takes_value(const std::string& a) {
  for (const char* o :
       {"--threads", "--threads-per-rank", "--data-dir", "-np", "-n", "--np", "--mpirun",
        "--mpi-arg", "--hostfile", "--workers-per-node", "--gpus-per-node", "--ps-per-node", "--ps",
        "--device", "--launcher", "--max-restarts", "--stall-timeout", "--timeline"})
    if (a == o) return true;
  return false;
}

// Index in argv of the script: the first argument that is neither one of
// drun's options nor the value of one (argc when there is none).
int script_position(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") return i + 1 < argc ? i + 1 : argc;
    if (a.empty() || a[0] != '-' || a == "-") return i;
    if (takes_value(a)) ++i;  // `--name=value` carries its own
  }
  return argc;
}

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// OpenBLAS chose its kernels when it loaded, from the CPU's model number; on
// a CPU newer than the library that can be a generic SSE3 core. Then drun
// restarts itself once with OPENBLAS_CORETYPE naming the core of the vector
// instructions the CPU has (kernels/cpu/blas_core.hpp), before anything runs.
void use_the_right_blas_core(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("DRUN_BLAS_CORE_CHOSEN")) return;
  const std::string better = drun::kernels::cpu::better_blas_core(
      drun::kernels::cpu::blas_core(), drun::kernels::cpu::supported_cpu_kernels().back()->name);
  if (better.empty()) return;
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  setenv("DRUN_BLAS_CORE_CHOSEN", "1", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: go on with the core there is
}

// DRUN_ISA, if set, must name a kernel variant this CPU runs.
bool cpu_kernels_chosen() {
  try {
    drun::kernels::cpu::cpu_kernels();
    return true;
  } catch (const std::exception& e) {
    std::cerr << "drun: " << e.what() << "\n";
    return false;
  }
}

constexpr const char* kInspectUsage = "usage: drun inspect MODEL.h5";

// `drun inspect m.h5`: what a Keras HDF5 model file holds.
int inspect(int argc, char** argv) {
  const std::string arg = argc == 3 ? argv[2] : "";
  if (arg == "--help" || arg == "-h") {
    std::cout << kInspectUsage << "\n"
              << "Prints what a Keras HDF5 model file holds (one written by Keras'\n"
                 "model.save('m.h5') or by drun's model:save): the Keras version and backend\n"
                 "that wrote it, then each layer's class, output shape and parameter count.\n";
    return 0;
  }
  if (argc != 3) {
    std::cerr << kInspectUsage << "\n";
    return drun::lua::kUsageExitCode;
  }
  try {
    std::cout << drun::keras::inspect(arg);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "drun inspect: " << e.what() << "\n";
    return 1;
  }
}

// A count given on the command line: a whole number of at least `least`
// (CLI11's own number checks print the range of a double).
CLI::Validator count_of_at_least(int least) {
  return CLI::Validator(
      [least](std::string& value) -> std::string {
        size_t used = 0;
        long n = 0;
        try {
          n = std::stol(value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == value.size() && !value.empty() && n >= least) return "";
        return "expected a whole number of at least " + std::to_string(least) + ", got '" + value +
               "'";
      },
      "N");
}

// Reads the command line into `req`; the exit code when drun ends here.
std::optional<int> parse_command_line(int argc, char** argv, drun::launch::Request& req) {
  CLI::App app{"drun: distributed deep-learning training from Lua experiment scripts", "drun"};
  app.footer(
      "subcommands:\n"
      "  inspect MODEL.h5     what a Keras HDF5 model file holds (drun inspect --help)\n\n"
      "script.lua --help lists the script's own options.");
  app.set_version_flag("--version", [] {
    return "drun " DRUN_VERSION "\n" + drun::kernels::platform_text() + "lua: " DRUN_LUA_TEXT "\n";
  });
  app.add_option("--threads,--threads-per-rank", req.threads,
                 "threads for each process (default: the node's cores shared by its ranks)")
      ->check(count_of_at_least(0));
  app.add_option("--data-dir", req.data_dir, "where data sets are read from (or DRUN_DATA_DIR)");
  app.add_flag("-q,--quiet", req.quiet, "no progress output");
  app.add_option("--device", req.device,
                 "where workers compute: auto (each worker's GPU where it has one), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("-n,--np", req.ranks, "workers in all (-np N as with mpirun)")
      ->check(count_of_at_least(1));
  app.add_option("--hostfile", req.hostfile, "nodes to run on (Open MPI hostfile format)");
  app.add_option("--workers-per-node", req.workers_per_node,
                 "workers on each node (default: the tasks asked of the scheduler less the "
                 "servers there, else one per GPU, else 1)");
  app.add_option("--gpus-per-node", req.gpus_per_node,
                 "GPUs on each node (default: CUDA_VISIBLE_DEVICES, the scheduler, or 0)");
  app.add_option("--ps-per-node", req.ps_per_node,
                 "parameter servers on each node (default: 1 when the strategy uses them)");
  app.add_option("--ps", req.ps,
                 "parameter servers in all, spread over the nodes like -np (instead of "
                 "--ps-per-node)")
      ->check(count_of_at_least(0));
  app.add_flag("--evaluator", req.evaluator,
               "run as the evaluator of a training job: evaluate each new checkpoint in the "
               "script's model_dir until the training is over (one process, beside the job)");
  app.add_flag("--dry-run", req.dry_run,
               "print strategy, model, placement and TF_CONFIG, and start nothing");
  app.add_option("--mpirun", req.mpirun, "the mpirun to start ranks with");
  app.add_option("--launcher", req.launcher,
                 "what starts the ranks: auto (srun --mpi=pmix inside a Slurm allocation, "
                 "else mpirun), srun or mpirun")
      ->check(CLI::IsMember({"auto", "srun", "mpirun"}));
  app.add_option("--max-restarts", req.max_restarts,
                 "when a rank dies, restart the job from the newest checkpoint up to N times "
                 "(default 0: the job ends)")
      ->check(count_of_at_least(0));
  app.add_option("--stall-timeout", req.stall_timeout,
                 "seconds a rank may wait in an exchange for a rank that has fallen silent "
                 "(stopped, frozen) before that rank is named and the job ends (default 60; "
                 "0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--timeline", req.timeline,
                 "write a Chrome trace (Perfetto, chrome://tracing) of every fit: each rank's "
                 "layers, exchanges, waits, input and updates (docs/timeline.md)");
  app.add_option("--mpi-arg", req.mpi_args,
                 "an argument passed through to mpirun or srun (repeatable)");
  app.add_option("script", req.script, "the experiment, a Lua file")->required();
  // Everything after the script belongs to the script (`drun exp.lua --help`
  // is the script's help), so drun parses only the arguments before it.
  const int script_at = script_position(argc, argv);
  for (int i = script_at + 1; i < argc; ++i) req.script_args.emplace_back(argv[i]);
  // mpirun's spelling -np is one dash and two letters, which CLI11 cannot name.
  std::vector<std::string> own(argv, argv + std::min(argc, script_at + 1));
  for (auto& a : own)
    if (a == "-np") a = "--np";
  std::vector<char*> own_argv;
  for (auto& a : own) own_argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(own_argv.size()), own_argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as for a script's own options: what was wrong, and where to look.
    std::cerr << "drun: " << e.what() << " (drun --help lists the options)\n";
    return drun::lua::kUsageExitCode;
  }
  if (!std::filesystem::exists(req.script)) {
    std::cerr << "drun: no such script: " << req.script << "\n";
    return drun::lua::kUsageExitCode;
  }
  if (req.data_dir.empty())
    if (const char* env = std::getenv("DRUN_DATA_DIR")) req.data_dir = env;
  // Absolute: the ranks' working directory need not be this one.
  if (!req.timeline.empty()) req.timeline = std::filesystem::absolute(req.timeline).string();
  return std::nullopt;
}

// This process's start-up as the request asks for it.
drun::train::Process::Settings process_settings(const drun::launch::Request& req) {
  drun::train::Process::Settings s;
  s.threads = req.threads;
  s.data_dir = req.data_dir;
  s.quiet = req.quiet;
  s.device = req.device;
  s.evaluator = req.evaluator;
  s.preemption_from_start = true;
  return s;
}

// A started process's context, with where drun's Lua code is and the trace to write.
drun::train::Context& with_drun_paths(drun::train::Process& process,
                                      const drun::launch::Request& req) {
  auto& ctx = process.context();
  ctx.module_root = module_root();
  ctx.models_root = models_root();
  ctx.timeline = req.timeline;
  return ctx;
}

// Outside an MPI job, drun may have a job of many ranks to start: then it
// plans and starts it (or prints the plan), and returns its exit code.
std::optional<int> launch_if_needed(const drun::launch::Request& req) {
  if (req.evaluator) {  // beside the job, not in it: one process, no MPI
    if (req.ranks > 0 || req.dry_run)
      throw drun::UsageError(
          "--evaluator runs one process beside the training job; drop -np and --dry-run");
    return std::nullopt;
  }
  if (drun::distributed::in_mpi_job()) return std::nullopt;
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const auto cluster = drun::launch::discover_cluster(
      drun::launch::Environment::from_process(),
      {req.hostfile, req.gpus_per_node, cores, hostname(),
       req.device == "cpu" ? 0 : drun::kernels::cuda_device_count()});
  if (!drun::launch::needs_launch(req, cluster)) return std::nullopt;
  auto settings = process_settings(req);
  settings.join_mpi = false;  // the launcher's own run of the script, in plan mode
  settings.device = "cpu";
  drun::train::Process planner(nullptr, nullptr, settings);
  return drun::launch::launch(req, cluster, with_drun_paths(planner, req));
}

// Runs the script in this process (alone, a rank of a job, or the evaluator).
int run_here(const drun::launch::Request& req, int argc, char** argv) {
  std::unique_ptr<drun::train::Process> process;
  try {
    process = std::make_unique<drun::train::Process>(&argc, &argv, process_settings(req));
  } catch (const std::exception& e) {
    std::cerr << "drun: " << e.what() << "\n";
    return 1;
  }
  auto& ctx = with_drun_paths(*process, req);
  return process->finish(drun::lua::run_script(ctx, req.script, req.script_args));
}

}  // namespace

int main(int argc, char** argv) {
  use_the_right_blas_core(argv);
  if (!cpu_kernels_chosen()) return 1;
  if (argc >= 2 && std::string(argv[1]) == "inspect") return inspect(argc, argv);
  drun::launch::Request req;
  if (const auto done = parse_command_line(argc, argv, req)) return *done;
  try {
    if (const auto job = launch_if_needed(req)) return *job;
  } catch (const std::exception& e) {
    std::cerr << "drun: " << e.what() << "\n";
    return 1;
  }
  return run_here(req, argc, argv);
}

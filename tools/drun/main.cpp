// drun: runs a Lua experiment script, as one process or as a job of many.
// This file only parses the command line and fills the runtime context; the
// launcher (launch.cpp) places and starts ranks, the runtime does the rest.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "base/install_layout.hpp"
#include "distributed/comm.hpp"
#include "distributed/stall_inspector.hpp"
#include "keras/keras_h5.hpp"
#include "kernels/cpu/blas_core.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/gemm.hpp"
#include "kernels/platform.hpp"
#include "launch.hpp"
#include "launch/cluster.hpp"
#include "runner.hpp"
#include "train/job.hpp"
#include "train/preemption.hpp"

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

}  // namespace

// Where this rank's kernels run: its GPU (placement's, or the one GPU of a
// single process) unless --device says otherwise. The GPU context opens
// here, once: it makes that GPU the process's device (cudaSetDevice).
void choose_device(drun::train::Context& ctx, const std::string& device) {
  // Parameter servers and the evaluator serve from host memory, whatever the workers use.
  if (device == "cpu" || ctx.role == "ps" || ctx.role == "evaluator") return;
  const int gpus = drun::kernels::cuda_device_count();
  if (ctx.gpu < 0 && !ctx.comm && gpus > 0) ctx.gpu = 0;
  if (device == "cuda" && (ctx.gpu < 0 || ctx.gpu >= gpus))
    throw drun::UsageError(
        "--device cuda: " +
        std::string(!drun::kernels::cuda_built() ? "this drun was built without CUDA"
                    : gpus == 0                  ? "no GPU found"
                                : "this rank was placed on no GPU (GPU " + std::to_string(ctx.gpu) +
                                      " of " + std::to_string(gpus) + ")"));
  if (ctx.gpu < 0 || ctx.gpu >= gpus) return;
  ctx.cuda = drun::kernels::make_cuda_context(ctx.gpu);
  ctx.exec.device = drun::Device::cuda;
  ctx.exec.gpu = ctx.cuda.get();
}

// A rank of a job the launcher started: its stall inspector, when the
// launcher asked for one (DRUN_STALL_DIR, DRUN_STALL_TIMEOUT > 0).
std::unique_ptr<drun::distributed::StallInspector> start_stall_inspector(
    const drun::train::Context& ctx, const drun::distributed::Communicator& comm) {
  const char* dir = std::getenv("DRUN_STALL_DIR");
  const char* timeout = std::getenv("DRUN_STALL_TIMEOUT");
  if (!dir || !*dir || !timeout || comm.size() < 2) return nullptr;
  const double seconds = std::atof(timeout);
  if (seconds <= 0) return nullptr;
  drun::distributed::Heartbeat me;
  me.rank = comm.rank();
  me.host = hostname();
  me.role = ctx.role;
  me.task_index = ctx.task_index;
  return std::make_unique<drun::distributed::StallInspector>(dir, seconds, me);
}

constexpr const char* kInspectUsage = "usage: drun inspect MODEL.h5";

// `drun inspect m.h5`: what a Keras HDF5 model file holds.
int inspect(const std::string& path) {
  try {
    std::cout << drun::keras::inspect(path);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "drun inspect: " << e.what() << "\n";
    return 1;
  }
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

int main(int argc, char** argv) {
  use_the_right_blas_core(argv);
  try {
    drun::kernels::cpu::cpu_kernels();  // DRUN_ISA, if set, must name a variant the CPU runs
  } catch (const std::exception& e) {
    std::cerr << "drun: " << e.what() << "\n";
    return 1;
  }
  if (argc >= 2 && std::string(argv[1]) == "inspect") {
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
    return inspect(arg);
  }
  CLI::App app{"drun: distributed deep-learning training from Lua experiment scripts", "drun"};
  app.footer(
      "subcommands:\n"
      "  inspect MODEL.h5     what a Keras HDF5 model file holds (drun inspect --help)\n\n"
      "script.lua --help lists the script's own options.");
  app.set_version_flag("--version", [] {
    return "drun " DRUN_VERSION "\n" + drun::kernels::platform_text() + "lua: " DRUN_LUA_TEXT "\n";
  });
  drun::launch::Request req;
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
  bool evaluator = false;
  app.add_flag("--evaluator", evaluator,
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

  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  drun::train::Context ctx;
  if (req.data_dir.empty())
    if (const char* env = std::getenv("DRUN_DATA_DIR")) req.data_dir = env;
  ctx.data_dir = req.data_dir;
  const char* tty = std::getenv("DRUN_TTY");  // set by the launcher for its ranks
  ctx.tty = tty ? std::string(tty) == "1" : isatty(STDOUT_FILENO) != 0;
  ctx.quiet = req.quiet;
  // Absolute: the ranks' working directory need not be this one.
  if (!req.timeline.empty()) req.timeline = std::filesystem::absolute(req.timeline).string();
  ctx.timeline = req.timeline;
  ctx.module_root = module_root();
  ctx.models_root = models_root();
  drun::kernels::cpu::blas_init_single_threaded();
  // From the start, on every rank: a scheduler's warning signal must never
  // kill a rank that has not reached its training loop (or never will: servers).
  drun::train::install_preemption_handlers();

  std::unique_ptr<drun::distributed::Communicator> comm, workers;
  std::unique_ptr<drun::distributed::StallInspector> inspector;
  try {
    if (evaluator) {
      // Beside the job, not in it: one process, its own threads, no MPI.
      if (req.ranks > 0 || req.dry_run)
        throw drun::UsageError(
            "--evaluator runs one process beside the training job; drop -np "
            "and --dry-run");
      ctx.role = "evaluator";
      ctx.label = "evaluator";
      // TensorFlow's evaluator task sits outside the cluster it evaluates.
      ctx.tf_config = {{"cluster", drun::json::object()},
                       {"task", {{"type", "evaluator"}, {"index", 0}}}};
      setenv("TF_CONFIG", ctx.tf_config.dump().c_str(), 1);
      setenv("DRUN_ROLE", "evaluator", 1);
      const char* env = std::getenv("DRUN_THREADS");
      ctx.exec.threads = req.threads > 0 ? req.threads : env ? std::atoi(env) : 1;
    } else if (drun::distributed::in_mpi_job()) {
      comm = std::make_unique<drun::distributed::Communicator>(&argc, &argv);
      ctx.comm = comm.get();
      ctx.exec.threads = req.threads > 0 ? req.threads : std::max(1, cores / comm->local_size());
      drun::train::take_role(ctx, comm->rank(), comm->size());
      inspector = start_stall_inspector(ctx, *comm);
      workers = comm->split(ctx.role == "ps" ? 1 : 0);
      ctx.workers = workers.get();
      if (ctx.role != "chief") ctx.quiet = true;  // only the chief draws progress
    } else {
      const auto cluster = drun::launch::discover_cluster(
          drun::launch::Environment::from_process(),
          {req.hostfile, req.gpus_per_node, cores, hostname(),
           req.device == "cpu" ? 0 : drun::kernels::cuda_device_count()});
      if (drun::launch::needs_launch(req, cluster)) return drun::launch::launch(req, cluster, ctx);
      const char* env = std::getenv("DRUN_THREADS");
      ctx.exec.threads = req.threads > 0 ? req.threads : env ? std::atoi(env) : cores;
    }
  } catch (const std::exception& e) {
    std::cerr << "drun: " << e.what() << "\n";
    if (comm && comm->size() > 1) comm->abort(1);
    return 1;
  }
  ctx.exec.threads = std::max(1, ctx.exec.threads);
  try {
    choose_device(ctx, req.device);
  } catch (const std::exception& e) {
    std::cerr << "drun: " << (ctx.label.empty() ? "" : ctx.label + ": ") << e.what() << "\n";
    if (comm && comm->size() > 1) comm->abort(1);
    return 1;
  }

  const int rc = drun::lua::run_script(ctx, req.script, req.script_args);
  // A failed rank ends the whole job at once rather than leave the others
  // waiting in a collective.
  // A preempted job's ranks all stop at the same step and exit by themselves.
  if (rc != 0 && rc != drun::train::kPreemptedExitCode && comm && comm->size() > 1) {
    inspector.reset();  // its heartbeat goes with it: abort runs no destructor
    comm->abort(rc);
  }
  return rc;
}

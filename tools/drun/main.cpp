// drun: runs a Lua experiment script, as one process or as a job of many.
// This file only decides which: the command line is command_line.cpp's, a
// process's start-up (threads, role, communicators, device) the runtime's
// (train/job), placing and starting ranks the launcher's (launch.cpp).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "base/install_layout.hpp"
#include "command_line.hpp"
#include "keras/keras_h5.hpp"
#include "kernels/cpu/blas_core.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "launch.hpp"
#include "launch/cluster.hpp"
#include "runner.hpp"
#include "train/job.hpp"
#include "train/registries.hpp"

#ifndef DRUN_LUA_DIR
#define DRUN_LUA_DIR ""
#endif
#ifndef DRUN_MODELS_DIR
#define DRUN_MODELS_DIR ""
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

// `drun help [NAME]`: every name of the registries (layers, strategies...),
// or the entry called NAME with its options, types, defaults and meaning.
int help(int argc, char** argv) {
  if (argc > 3) {
    std::cerr << "usage: drun help [NAME]\n";
    return drun::lua::kUsageExitCode;
  }
  try {
    std::cout << drun::train::registry_help(argc == 3 ? argv[2] : "");
    return 0;
  } catch (const drun::UsageError& e) {
    std::cerr << e.what() << "\n";
    return drun::lua::kUsageExitCode;
  }
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
  if (argc >= 2 && std::string(argv[1]) == "help") return help(argc, argv);
  drun::launch::Request req;
  if (const auto done = drun::cli::parse(argc, argv, req)) return *done;
  try {
    if (const auto job = launch_if_needed(req)) return *job;
  } catch (const drun::UsageError& e) {  // a request the job cannot honour, before it starts
    std::cerr << "drun: " << e.what() << "\n";
    return drun::lua::kUsageExitCode;
  } catch (const std::exception& e) {
    std::cerr << "drun: " << e.what() << "\n";
    return 1;
  }
  return run_here(req, argc, argv);
}

// drun: runs a Lua experiment script. This file only parses the command line
// and fills the runtime context; everything else lives in the runtime.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "dist/comm.hpp"
#include "kernels/cpu/gemm.hpp"
#include "runner.hpp"

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

std::string models_root() {
  if (const char* env = std::getenv("DRUN_MODELS_PATH")) return env;
  return std::filesystem::weakly_canonical(DRUN_MODELS_DIR).string();
}

std::string module_root() {
  if (const char* env = std::getenv("DRUN_LUA_PATH")) return env;
  return std::filesystem::weakly_canonical(DRUN_LUA_DIR).string();
}

// Index in argv of the script: the first argument that is neither one of
// drun's options nor the value of one (argc when there is none).
int script_position(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") return i + 1 < argc ? i + 1 : argc;
    if (a.empty() || a[0] != '-' || a == "-") return i;
    // Options with a separate value; `--name=value` carries its own.
    if (a == "--threads" || a == "--threads-per-rank" || a == "--data-dir" || a == "-np" ||
        a == "--mpirun" || a == "--mpi-arg")
      ++i;
  }
  return argc;
}

// Starts this same command as `ranks` ranks under Open MPI's mpirun (root-safe,
// oversubscribing when ranks outnumber cores, unbound so each rank's threads
// can use its share of the cores) and becomes that mpirun.
int launch(const std::string& mpirun, int ranks, int threads,
           const std::vector<std::string>& mpi_args, const std::vector<std::string>& rank_args) {
  std::vector<std::string> cmd = {
      mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
      "-np",  std::to_string(ranks)};
  cmd.insert(cmd.end(), mpi_args.begin(), mpi_args.end());
  cmd.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
  cmd.push_back("--threads");
  cmd.push_back(std::to_string(threads));
  cmd.insert(cmd.end(), rank_args.begin(), rank_args.end());
  std::vector<char*> argv;
  for (auto& s : cmd) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(argv[0], argv.data());
  std::cerr << "drun: cannot start " << mpirun << ": " << std::strerror(errno)
            << " (install Open MPI: apt-get install openmpi-bin, or pass --mpirun PATH)\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"drun: distributed deep-learning training from Lua experiment scripts", "drun"};
  app.set_version_flag("--version", DRUN_VERSION);
  int threads = 0;
  std::string data_dir, script;
  std::vector<std::string> script_args;
  bool quiet = false;
  app.add_option("--threads,--threads-per-rank", threads,
                 "threads for this process (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--data-dir", data_dir, "where data sets are read from (or DRUN_DATA_DIR)");
  app.add_flag("-q,--quiet", quiet, "no progress output");
  int ranks = 1;
  std::string mpirun = "mpirun";
  std::vector<std::string> mpi_args;
  app.add_option("-n,--np", ranks, "workers to start on this machine (through mpirun); -np N too")
      ->check(CLI::PositiveNumber);
  app.add_option("--mpirun", mpirun, "the mpirun to start ranks with");
  app.add_option("--mpi-arg", mpi_args, "an argument passed through to mpirun (repeatable)");
  app.add_option("script", script, "the experiment, a Lua file")->required();
  // Everything after the script belongs to the script, options included
  // (`drun exp.lua --help` is the script's help). CLI11's prefix_command still
  // takes options it knows (--help, --threads...) after the script, so drun
  // parses only the arguments before the script.
  const int script_at = script_position(argc, argv);
  // mpirun's spelling -np is one dash and two letters, which CLI11 cannot name.
  std::vector<std::string> own(argv, argv + std::min(argc, script_at + 1));
  for (auto& a : own)
    if (a == "-np") a = "--np";
  std::vector<char*> own_argv;
  for (auto& a : own) own_argv.push_back(a.data());
  for (int i = script_at + 1; i < argc; ++i) script_args.emplace_back(argv[i]);
  try {
    app.parse(static_cast<int>(own_argv.size()), own_argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!std::filesystem::exists(script)) {
    std::cerr << "drun: no such script: " << script << "\n";
    return 1;
  }

  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (ranks > 1 && !drun::dist::in_mpi_job()) {
    std::vector<std::string> rank_args;
    if (!data_dir.empty()) rank_args.insert(rank_args.end(), {"--data-dir", data_dir});
    if (quiet) rank_args.push_back("-q");
    rank_args.push_back(script);
    rank_args.insert(rank_args.end(), script_args.begin(), script_args.end());
    return launch(mpirun, ranks, threads > 0 ? threads : std::max(1, cores / ranks), mpi_args,
                  rank_args);
  }

  drun::train::Context ctx;
  std::unique_ptr<drun::dist::Communicator> comm;
  if (drun::dist::in_mpi_job()) {
    comm = std::make_unique<drun::dist::Communicator>(&argc, &argv);
    ctx.comm = comm.get();
    if (comm->rank() != 0) {
      ctx.label = "worker " + std::to_string(comm->rank());
      quiet = true;  // only the chief draws progress
    }
    if (threads <= 0) threads = std::max(1, cores / comm->local_size());
  }
  if (threads <= 0) {
    const char* env = std::getenv("DRUN_THREADS");
    threads = env ? std::atoi(env) : cores;
  }
  ctx.exec.threads = std::max(1, threads);
  if (data_dir.empty())
    if (const char* env = std::getenv("DRUN_DATA_DIR")) data_dir = env;
  ctx.data_dir = data_dir;
  ctx.tty = isatty(STDOUT_FILENO) != 0;
  ctx.quiet = quiet;
  ctx.module_root = module_root();
  ctx.models_root = models_root();
  drun::kernels::cpu::blas_init_single_threaded();
  const int rc = drun::lua::run_script(ctx, script, script_args);
  // A failed rank ends the whole job at once rather than leave the others
  // waiting in a collective.
  if (rc != 0 && comm && comm->size() > 1) comm->abort(rc);
  return rc;
}

// drun: runs a Lua experiment script. This file only parses the command line
// and fills the runtime context; everything else lives in the runtime.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

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
    if (a == "--threads" || a == "--threads-per-rank" || a == "--data-dir") ++i;
  }
  return argc;
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
  app.add_option("script", script, "the experiment, a Lua file")->required();
  // Everything after the script belongs to the script, options included
  // (`drun exp.lua --help` is the script's help). CLI11's prefix_command still
  // takes options it knows (--help, --threads...) after the script, so drun
  // parses only the arguments before the script.
  const int script_at = script_position(argc, argv);
  for (int i = script_at + 1; i < argc; ++i) script_args.emplace_back(argv[i]);
  try {
    app.parse(std::min(argc, script_at + 1), argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!std::filesystem::exists(script)) {
    std::cerr << "drun: no such script: " << script << "\n";
    return 1;
  }

  drun::train::Context ctx;
  if (threads <= 0) {
    const char* env = std::getenv("DRUN_THREADS");
    threads = env ? std::atoi(env) : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
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
  return drun::lua::run_script(ctx, script, script_args);
}

// drun: runs a Lua experiment script. This file only parses the command line
// and fills the runtime context; everything else lives in the runtime.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "kernels/cpu/gemm.hpp"
#include "runner.hpp"

#ifndef DRUN_LUA_DIR
#define DRUN_LUA_DIR ""
#endif
#ifndef DRUN_VERSION
#define DRUN_VERSION "unknown"
#endif

namespace {

std::string module_root() {
  if (const char* env = std::getenv("DRUN_LUA_PATH")) return env;
  return std::filesystem::weakly_canonical(DRUN_LUA_DIR).string();
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
  // Everything after the script belongs to the script, options included.
  app.prefix_command();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // prefix_command leaves the script's arguments in remaining().
  for (const auto& a : app.remaining()) script_args.push_back(a);
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
  drun::kernels::cpu::blas_init_single_threaded();
  return drun::lua::run_script(ctx, script, script_args);
}

// The Lua C module drun/core.so: `require 'drun'` in a stock luajit (or any
// Lua 5.1 host that finds PREFIX/lib/lua/5.1/?.so and PREFIX/share/lua/5.1)
// loads the same drun.core that the drun executable preloads, with a context
// of its own, started as drun starts one (train::Process): one process on the
// CPU (multi-rank jobs are drun's), threads and data_dir from DRUN_THREADS and
// DRUN_DATA_DIR. The Lua modules it serves are found by the host's
// package.path, as any Lua module's.
#include <dlfcn.h>

#include <filesystem>
#include <memory>

#include "base/install_layout.hpp"
#include "binding.hpp"
#include "core.hpp"
#include "train/job.hpp"

namespace drun::lua {

namespace {

// This module's file, to find the prefix it is installed in.
std::filesystem::path module_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_file), &info) == 0 || !info.dli_fname) return {};
  return info.dli_fname;
}

// One process-wide context, made at the first require. The host closes its
// Lua states (and frees drun's userdata) before static objects are destroyed.
train::Context& process_context() {
  static const std::unique_ptr<train::Process> process = [] {
    train::Process::Settings s;
    s.join_mpi = false;
    s.device = "cpu";
    auto p = std::make_unique<train::Process>(nullptr, nullptr, s);
    const auto so = std::filesystem::weakly_canonical(module_file());
    if (const auto prefix = install_prefix_of(so, kInstalledLuaCoreDir)) {
      p->context().module_root = (*prefix / installed_lua_dir()).string();
      p->context().models_root = (*prefix / installed_models_dir()).string();
    }
    return p;
  }();
  return process->context();
}

int open_module(lua_State* L) {
  train::Context* ctx = nullptr;
  guarded(L, [&] {  // C++ errors become a Lua error of require
    ctx = &process_context();
    return 0;
  });
  register_context(L, ctx);
  return open_core(L);
}

}  // namespace

}  // namespace drun::lua

extern "C" __attribute__((visibility("default"))) int luaopen_drun_core(lua_State* L) {
  return drun::lua::open_module(L);
}

// Runs a user's experiment script in a fresh Lua state with the drun module
// on its path, `arg` set as the standalone Lua interpreter sets it, and every
// error reported as "drun: file:line: message" plus a Lua traceback, except a
// usage error (a bad command-line option) and an exit error (a preempted
// fit): one line "drun: message".
#pragma once
#include <string>
#include <vector>

#include "train/context.hpp"

namespace drun::lua {

// Exit code of a usage error, as for a bad option of drun itself (BSD's EX_USAGE is 64,
// but 2 is what shells and argparse use).
inline constexpr int kUsageExitCode = 2;

// Returns the process exit code: 0, kUsageExitCode after a usage error, an
// exit error's own code (a preempted fit's kPreemptedExitCode), else 1 after
// printing the error to stderr.
int run_script(train::Context& ctx, const std::string& script,
               const std::vector<std::string>& args);

// The Lua this binding was compiled against ("LuaJIT 2.1..." or "PUC Lua
// 5.1.5"), for drun --version: the executables share one command line and
// differ in the binding they link.
const char* interpreter();

}  // namespace drun::lua

// Runs a user's experiment script in a fresh Lua state with the drun module
// on its path, `arg` set as the standalone Lua interpreter sets it, and every
// error reported as "drun: file:line: message" plus a Lua traceback.
#pragma once
#include <string>
#include <vector>

#include "train/context.hpp"

namespace drun::lua {

// Returns the process exit code: 0, or 1 after printing the error to stderr.
int run_script(train::Context& ctx, const std::string& script,
               const std::vector<std::string>& args);

}  // namespace drun::lua

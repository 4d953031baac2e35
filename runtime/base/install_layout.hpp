// Where an installed drun finds its Lua modules and model zoo: relative to
// the installed binary itself (bin/drun, lib/lua/5.1/drun/core.so), so that a
// prefix can be moved or copied elsewhere (Spack, EasyBuild, a tarball) and
// still work. The folders below the prefix come from Meson's options
// (bindir, datadir) when the project is configured (docs/platforms.md,
// "Installing").
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace drun {

// Relative to the prefix: where the module `drun` (drun/init.lua, drun/*.lua)
// and the model zoo (seed_cnn.lua, ...) are installed, and where the Lua C
// module drun/core.so is.
std::string installed_lua_dir();
std::string installed_models_dir();
inline constexpr const char* kInstalledLuaCoreDir = "lib/lua/5.1/drun";

// The prefix that `file` is installed in when it sits in `subdir` of one
// (e.g. "bin" for .../bin/drun), and that prefix holds drun's Lua modules;
// nullopt otherwise (a build tree).
std::optional<std::filesystem::path> install_prefix_of(const std::filesystem::path& file,
                                                       const std::filesystem::path& subdir);

// The installed drun executable's subdirectory of the prefix (Meson's bindir).
std::string installed_bin_dir();

// The running executable (/proc/self/exe).
std::filesystem::path self_executable();

}  // namespace drun

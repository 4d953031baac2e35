#include "base/install_layout.hpp"

#include <system_error>
#include <vector>

#include "install_dirs.hpp"  // made by Meson from runtime/install_dirs.hpp.in

namespace drun {

std::string installed_lua_dir() {
  return std::string(install_dirs::kDataDir) + "/lua/5.1";
}

std::string installed_models_dir() {
  return std::string(install_dirs::kDataDir) + "/drun/models";
}

std::string installed_bin_dir() {
  return install_dirs::kBinDir;
}

std::optional<std::filesystem::path> install_prefix_of(const std::filesystem::path& file,
                                                       const std::filesystem::path& subdir) {
  // Walk up from the file's folder once per component of subdir, checking
  // that each is the component expected: bin/drun in build/ is no install.
  std::filesystem::path dir = file.parent_path();
  std::vector<std::filesystem::path> parts(subdir.begin(), subdir.end());
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (dir.filename() != *it) return std::nullopt;
    dir = dir.parent_path();
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / installed_lua_dir() / "drun/init.lua", ec))
    return std::nullopt;
  return dir;
}

std::filesystem::path self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : p;
}

}  // namespace drun

#include "base/peak_memory.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace drun {

std::optional<double> peak_resident_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    double kib = 0.0;
    if (fields >> kib) return kib / 1024.0;
  }
  return std::nullopt;
}

}  // namespace drun

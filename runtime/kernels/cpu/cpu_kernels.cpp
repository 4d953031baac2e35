#include "kernels/cpu/cpu_kernels.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

#include "base/options.hpp"

namespace drun::kernels::cpu {

namespace baseline {
extern const CpuKernels kCpuKernels;
}
#if defined(__x86_64__)
namespace avx2 {
extern const CpuKernels kCpuKernels;
}
namespace avx512 {
extern const CpuKernels kCpuKernels;
}
#endif
#if defined(__powerpc64__)
namespace vsx {
extern const CpuKernels kCpuKernels;
}
#endif

namespace {

// Whether the CPU and the OS (saved vector state) support the variant.
bool cpu_runs(Isa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (isa) {
#if defined(__clang__)  // clang 14 knows the features, not the levels they make
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi2");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
    case Isa::avx2:
      return __builtin_cpu_supports("x86-64-v3");
    case Isa::avx512:
      return __builtin_cpu_supports("x86-64-v4");
#endif
    case Isa::baseline:
      return true;
    case Isa::vsx:
      return false;
  }
  return false;
#elif defined(__powerpc64__)
  // Every little-endian POWER (POWER8 and newer) has VSX; asked all the same,
  // as a build for big-endian POWER7 would run this too.
  return isa == Isa::baseline || (isa == Isa::vsx && __builtin_cpu_supports("vsx"));
#else
  return isa == Isa::baseline;
#endif
}

const CpuKernels& choose() {
  const auto supported = supported_cpu_kernels();
  const char* wanted = std::getenv("DRUN_ISA");
  if (!wanted || !*wanted) return *supported.back();
  std::string names;
  for (const CpuKernels* k : supported) {
    if (k->name == std::string(wanted)) return *k;
    names += (names.empty() ? "" : ", ") + std::string(k->name);
  }
  throw UsageError("DRUN_ISA=" + std::string(wanted) +
                   ": not a kernel variant this CPU and build can run; they are: " + names);
}

}  // namespace

std::vector<const CpuKernels*> supported_cpu_kernels() {
  std::vector<const CpuKernels*> all = {&baseline::kCpuKernels};
#if defined(__x86_64__)
  all.push_back(&avx2::kCpuKernels);
  all.push_back(&avx512::kCpuKernels);
#endif
#if defined(__powerpc64__)
  all.push_back(&vsx::kCpuKernels);
#endif
  std::vector<const CpuKernels*> runnable;
  for (const CpuKernels* k : all)
    if (cpu_runs(k->isa)) runnable.push_back(k);
  return runnable;
}

const CpuKernels& cpu_kernels() {
  static const CpuKernels& chosen = choose();
  return chosen;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  // x86: "model name : ..."; POWER: "cpu : POWER9 ..."
  for (const char* key : {"model name", "cpu"}) {
    in.clear();
    in.seekg(0);
    while (std::getline(in, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos || line.rfind(key, 0) != 0) continue;
      if (line.find_first_not_of(" \t", std::string(key).size()) != colon) continue;
      const auto start = line.find_first_not_of(" \t", colon + 1);
      if (start != std::string::npos) return line.substr(start);
    }
  }
  return "unknown";
}

}  // namespace drun::kernels::cpu

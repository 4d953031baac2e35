#include "kernels/cpu/blas_core.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

extern "C" char* openblas_get_corename(void);

namespace drun::kernels::cpu {

std::string blas_core() {
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

std::string blas_core_chosen_by() {
  if (!std::getenv("OPENBLAS_CORETYPE")) return "OpenBLAS";
  return std::getenv("DRUN_BLAS_CORE_CHOSEN") ? "drun" : "OPENBLAS_CORETYPE";
}

std::string better_blas_core(const std::string& core, const std::string& isa) {
  // OpenBLAS's x86 cores without AVX2 kernels (driver/others/dynamic.c).
  static constexpr std::array<std::string_view, 22> kPreAvx2 = {
      "Katmai",       "Coppermine", "Northwood",  "Prescott",  "Banias",      "Atom",
      "Core2",        "Penryn",     "Dunnington", "Nehalem",   "Sandybridge", "Opteron",
      "Opteron_SSE3", "Barcelona",  "Bobcat",     "Bulldozer", "Piledriver",  "Steamroller",
      "Excavator",    "Nano",       "Unknown",    "unknown"};
  const bool generic = std::find(kPreAvx2.begin(), kPreAvx2.end(), core) != kPreAvx2.end();
  if (!generic) return "";
  if (isa == "avx512") return "SkylakeX";
  if (isa == "avx2") return "Haswell";
  return "";
}

}  // namespace drun::kernels::cpu

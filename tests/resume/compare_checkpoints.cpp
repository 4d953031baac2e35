// compare_checkpoints A.h5 B.h5 [tolerance]: the largest absolute difference
// between the model variables ("model/...") of two checkpoints; exit 0 when
// it is at most the tolerance (default 0: bit for bit), 1 otherwise, 2 when a
// file cannot be read or the variables differ in name or shape.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/h5_tensors.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: compare_checkpoints A.h5 B.h5 [tolerance]\n");
    return 2;
  }
  const double tolerance = argc > 3 ? std::atof(argv[3]) : 0.0;
  try {
    const auto a = drun::io::read_tensor_file(argv[1]).tensors;
    const auto b = drun::io::read_tensor_file(argv[2]).tensors;
    double worst = 0;
    int compared = 0;
    for (const auto& [name, ta] : a) {
      if (name.rfind("model/", 0) != 0) continue;
      const auto it = b.find(name);
      if (it == b.end() || it->second.numel() != ta.numel()) {
        std::fprintf(stderr, "%s: missing or of another shape in %s\n", name.c_str(), argv[2]);
        return 2;
      }
      for (int64_t i = 0; i < ta.numel(); ++i)
        worst = std::fmax(worst, std::fabs(static_cast<double>(ta.f32()[i]) - it->second.f32()[i]));
      ++compared;
    }
    std::printf("%d variables, max |a - b| = %.3e (tolerance %.1e)\n", compared, worst, tolerance);
    return compared > 0 && worst <= tolerance ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

// Rng: a seeded generator whose sequence is the same on every platform and
// standard library (std::mt19937_64 is specified exactly; the distributions
// of <random> are not, so the conversions are written here).
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

namespace drun {

// SplitMix64's finaliser: nearby inputs (seeds, epochs, example indices) give
// unrelated 64-bit values, for seeding per-example or per-epoch generators.
inline uint64_t mix_bits(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : engine_(seed) {}
  uint64_t next() { return engine_(); }
  // Uniform in [0, 1) with 24 random bits, exact in float.
  float uniform() { return static_cast<float>(engine_() >> 40) * (1.0f / 16777216.0f); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal by Box-Muller.
  float normal() {
    const double u1 = (static_cast<double>(engine_() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    const double u2 = static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  // Normal truncated at two standard deviations, as Keras' truncated_normal.
  float truncated_normal() {
    for (;;) {
      const float z = normal();
      if (std::fabs(z) <= 2.0f) return z;
    }
  }
  // The engine's whole state as text (the standard's stream format), for checkpoints.
  std::string state() const {
    std::ostringstream out;
    out << engine_;
    return out.str();
  }
  void set_state(const std::string& text) {
    std::istringstream in(text);
    in >> engine_;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace drun

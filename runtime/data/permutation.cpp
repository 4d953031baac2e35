// Seed mixing, unbiased bounded integers and Fisher-Yates, all fixed bit for bit.
#include "data/permutation.hpp"

#include <numeric>
#include <utility>

#include "base/rng.hpp"

namespace drun::data {
namespace {

uint64_t splitmix64(uint64_t x) {
  return mix_bits(x + 0x9e3779b97f4a7c15ULL);
}

}  // namespace

uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b) {
  return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b);
}

uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  // Accept only draws below the largest multiple of bound, so each residue is
  // equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t r;
  do {
    r = rng();
  } while (r >= limit);
  return r % bound;
}

void shuffle_in_place(std::span<int64_t> v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(uniform_below(rng, i));
    std::swap(v[i - 1], v[j]);
  }
}

void permutation(int64_t n, uint64_t seed, uint64_t a, uint64_t b, std::vector<int64_t>& out) {
  out.resize(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), int64_t{0});
  std::mt19937_64 rng(mix_seed(seed, a, b));
  shuffle_in_place(out, rng);
}

}  // namespace drun::data

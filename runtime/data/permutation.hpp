// Portable random permutations: the same (seed, stream) gives the same order on
// every platform and standard library. std::mt19937_64's output is fixed by the
// C++ standard, but std::shuffle and std::uniform_int_distribution are not, so
// both are written out here.
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace drun::data {

// A well-mixed 64-bit seed from a base seed and two stream numbers (splitmix64).
uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b);

// Uniform in [0, bound), bound >= 1, by rejection (no modulo bias).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound);

// Fisher-Yates shuffle, from the back.
void shuffle_in_place(std::span<int64_t> v, std::mt19937_64& rng);

// out = a permutation of 0..n-1 that depends only on (seed, a, b).
void permutation(int64_t n, uint64_t seed, uint64_t a, uint64_t b, std::vector<int64_t>& out);

}  // namespace drun::data

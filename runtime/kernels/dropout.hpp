// Dropout's forward in one pass: each value keeps with probability `keep`
// (scaled by 1 / keep) or drops, by a hash of (key, its index) rather than a
// generator's stream, so that the GPU draws the mask itself, in parallel,
// with the CPU's bits: no mask comes from the host, nothing waits. The layer
// draws one key per step from its generator (nn/dropout.cpp), which keeps
// runs repeatable and resumable.
// One declaration for both backends: kernels/cpu/dropout.cpp on host
// pointers, kernels/cuda/dropout.cu on device pointers.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

inline constexpr uint64_t kDropoutGamma = 0x9E3779B97F4A7C15ull;  // SplitMix64's step

// The uniform in [0, 1) of value i under `key` (24 bits, as base/rng.hpp's
// uniform()): SplitMix64's finalizer of key + (i + 1) * gamma.
DRUN_HOST_DEVICE inline float dropout_uniform(uint64_t key, int64_t i) {
  uint64_t z = key + (static_cast<uint64_t>(i) + 1) * kDropoutGamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

// The key under which value `first` of an array is value 0 of its part (a
// thread's share of the CPU's loop): the same draws, whatever the split.
inline uint64_t dropout_key_from(uint64_t key, int64_t first) {
  return key + static_cast<uint64_t>(first) * kDropoutGamma;
}

DRUN_CPU_AND_CUDA(
    // mask[i] = uniform(key, i) < keep ? 1 / keep : 0; y[i] = x[i] * mask[i]
    // (x and y may alias).
    void dropout_forward(const float* x, float* mask, float* y, int64_t n, uint64_t key,
                         float keep);)

}  // namespace drun::kernels

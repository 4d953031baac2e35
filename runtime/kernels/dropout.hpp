// Dropout's forward in one pass: each value keeps with probability `keep`
// (scaled by 1 / keep) or drops, by a hash of (key, its index) rather than a
// generator's stream, so that the GPU draws the mask itself, in parallel,
// with the CPU's bits: no mask comes from the host, nothing waits. The layer
// draws one key per step from its generator (nn/dropout.cpp), which keeps
// runs repeatable and resumable, and writes it to memory beside the data
// before the step (dropout_set_key); the forward reads it from there where
// it runs, so that a step captured into a CUDA graph draws each step's mask.
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

// The key as dropout_set_key stores it: two 32-bit halves, the low one first.
DRUN_HOST_DEVICE inline void dropout_store_key(uint64_t key, int32_t* stored) {
  stored[0] = static_cast<int32_t>(static_cast<uint32_t>(key));
  stored[1] = static_cast<int32_t>(static_cast<uint32_t>(key >> 32));
}
DRUN_HOST_DEVICE inline uint64_t dropout_key(const int32_t* stored) {
  return static_cast<uint64_t>(static_cast<uint32_t>(stored[0])) |
         static_cast<uint64_t>(static_cast<uint32_t>(stored[1])) << 32;
}

DRUN_CPU_AND_CUDA(
    // stored[0..1] = key (dropout_store_key; dropout_key reads it back).
    void dropout_set_key(uint64_t key, int32_t* stored);
    // For the n values of an array from index `first` on (a thread's share of
    // the CPU's loop; the same draws whatever the split): mask[i] =
    // uniform(key, first + i) < keep ? 1 / keep : 0; y[i] = x[i] * mask[i]
    // (x and y may alias), with the key read from `stored`.
    void dropout_forward(const float* x, float* mask, float* y, int64_t n, const int32_t* stored,
                         int64_t first, float keep);)

}  // namespace drun::kernels

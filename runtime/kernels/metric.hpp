// Metrics of one batch as sums over it: train/running_values adds them up
// over an epoch and divides by the count, which the host knows (rows, or
// values). Each writes its sum into *sum on its own device, so a GPU's step
// waits for no metric: they are read when someone asks for them.
// One declaration for both backends: kernels/cpu/metric.cpp on host
// pointers, kernels/cuda/metric.cu on device pointers.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(
    // Rows whose largest prediction (the first of equal ones) is at the label.
    void label_hits(const float* pred, const int32_t* labels, int64_t rows, int64_t cols,
                    float* sum);
    // Rows whose largest prediction is where the target row's largest value is (one-hot targets).
    void argmax_hits(const float* pred, const float* targets, int64_t rows, int64_t cols,
                     float* sum);
    // Values on the same side of `threshold` as their target is of 0.5 (binary accuracy).
    void threshold_hits(const float* pred, const float* targets, int64_t n, float threshold,
                        float* sum);
    // The sum of (pred - target)^2, or of |pred - target| where !squared.
    void error_sum(const float* pred, const float* targets, int64_t n, bool squared, float* sum);)

}  // namespace drun::kernels

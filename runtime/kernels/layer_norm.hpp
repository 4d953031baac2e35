// Layer normalisation over the last axis of `rows` x `c` values: each row
// is normalised by its own mean and (biased) variance, y = (x - mean) inv_std
// gamma + beta, inv_std = 1 / sqrt(var + eps), the same in training and
// inference (Keras' LayerNormalization). One declaration for both backends:
// kernels/cpu/layer_norm.cpp on host pointers (rows split over threads by
// ops_cpu.cpp), kernels/cuda/layer_norm.cu on device pointers (one warp per
// row, launched on the default stream).
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(
    // mean, inv_std: one per row, kept for backward. gamma null: scale 1
    // (scale=false); beta null: shift 0 (center=false).
    void layer_norm_forward(const float* x, int64_t rows, int64_t c, const float* gamma,
                            const float* beta, float eps, float* mean, float* inv_std, float* y);
    // dx (overwritten) from dy and the forward's per-row statistics.
    void layer_norm_backward_input(const float* x, const float* dy, int64_t rows, int64_t c,
                                   const float* gamma, const float* mean, const float* inv_std,
                                   float* dx);
    // dgamma = sum over rows of dy xhat, dbeta = sum of dy (overwritten);
    // either may be null (not computed).
    void layer_norm_param_grads(const float* x, const float* dy, int64_t rows, int64_t c,
                                const float* mean, const float* inv_std, float* dgamma,
                                float* dbeta);)

}  // namespace drun::kernels

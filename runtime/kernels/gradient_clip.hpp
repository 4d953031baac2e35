// Keras 3's gradient clipping (its base optimizer's _clip_gradients), on a
// gradient in place before the update, with Keras' formulas and their NaN
// conventions, so that results agree with Keras to rounding:
//   norm:        l2 = sqrt(sum_squares) where sum_squares > 0, else
//                sum_squares (0 or NaN); g = g * limit / max(l2, limit)
//   global_norm: n = sqrt(sum_squares over every gradient);
//                g = g * (limit * min(1 / n, 1 / limit) + (n - n))
//   value:       g = clip(g, -limit, limit)
// (max, min and clip propagate a NaN, as jax.numpy's do.)
// The gradient may be multiplied by a loss scale S, the update multiplying it
// by step[kGradFactor] = 1 / S afterwards (kernels/optimizer_update.hpp):
// the norm is then sqrt(sum_squares) / S and the clip value limit * S, both
// exact for a power of two, so a scaled gradient is clipped as Keras clips
// the unscaled one. Like an update, nothing is written where step[kSkip] is
// set. One declaration for both backends: kernels/cpu/gradient_clip.cpp on
// host pointers, kernels/cuda/gradient_clip.cu on device pointers
// (sum_squares and step included: a captured step reads each replay's).
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/host_device.hpp"
#include "kernels/types.hpp"

namespace drun::kernels {

// The scalar part, shared by both backends so that they compute the same bits.
namespace clip {

// The norm Keras computes, from the sum of squares of a gradient that the
// update multiplies by `factor` (1 / the loss scale, a power of two).
DRUN_HOST_DEVICE inline float norm_of(float sum_squares, float factor) {
  return sum_squares > 0.f ? sqrtf(sum_squares) * factor : sum_squares;
}

// jax.numpy's maximum and minimum: a NaN wins.
DRUN_HOST_DEVICE inline float nan_max(float a, float b) {
  return (a != a || a > b) ? a : b;
}
DRUN_HOST_DEVICE inline float nan_min(float a, float b) {
  return (a != a || a < b) ? a : b;
}

// global_norm's factor, NaN for an infinite or NaN norm.
DRUN_HOST_DEVICE inline float global_scale(float norm, float limit) {
  return limit * nan_min(1.f / norm, 1.f / limit) + (norm - norm);
}

}  // namespace clip

DRUN_CPU_AND_CUDA(
    // sum_squares may be null for GradientClip::value.
    void clip_gradient(GradientClip kind, float limit, const float* sum_squares, const float* step,
                       float* g, int64_t n);)

}  // namespace drun::kernels

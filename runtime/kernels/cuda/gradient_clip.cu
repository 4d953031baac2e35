// The gradient clipping of gradient_clip.hpp: one grid-stride pass; every
// thread computes the clip's scalar from the device's sum of squares and step
// values itself (a few flops), so nothing is read back to the host.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/gradient_clip.hpp"
#include "kernels/optimizer_update.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

__global__ void clip_norm_kernel(float limit, const float* sum_squares, const float* step, float* g,
                                 int64_t n) {
  if (step[kSkip] != 0.f) return;
  const float denom = clip::nan_max(clip::norm_of(*sum_squares, step[kGradFactor]), limit);
  for (int64_t i = first_index(); i < n; i += grid_stride()) g[i] = g[i] * limit / denom;
}

__global__ void clip_global_norm_kernel(float limit, const float* sum_squares, const float* step,
                                        float* g, int64_t n) {
  if (step[kSkip] != 0.f) return;
  const float s = clip::global_scale(clip::norm_of(*sum_squares, step[kGradFactor]), limit);
  for (int64_t i = first_index(); i < n; i += grid_stride()) g[i] *= s;
}

__global__ void clip_value_kernel(float limit, const float* step, float* g, int64_t n) {
  if (step[kSkip] != 0.f) return;
  const float hi = limit / step[kGradFactor], lo = -hi;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float x = g[i];
    g[i] = x < lo ? lo : (x > hi ? hi : x);
  }
}

}  // namespace

void clip_gradient(GradientClip kind, float limit, const float* sum_squares, const float* step,
                   float* g, int64_t n) {
  switch (kind) {
    case GradientClip::norm:
      clip_norm_kernel<<<blocks_for(n), kThreads>>>(limit, sum_squares, step, g, n);
      break;
    case GradientClip::global_norm:
      clip_global_norm_kernel<<<blocks_for(n), kThreads>>>(limit, sum_squares, step, g, n);
      break;
    case GradientClip::value:
      clip_value_kernel<<<blocks_for(n), kThreads>>>(limit, step, g, n);
      break;
  }
  check_launch("clip_gradient");
}

}  // namespace drun::kernels::cuda

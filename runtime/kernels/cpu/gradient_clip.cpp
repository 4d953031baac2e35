#include "kernels/gradient_clip.hpp"

#include "kernels/optimizer_update.hpp"

namespace drun::kernels::cpu {

void clip_gradient(GradientClip kind, float limit, const float* sum_squares, const float* step,
                   float* __restrict g, int64_t n) {
  if (step[kSkip] != 0.f) return;
  const float factor = step[kGradFactor];
  switch (kind) {
    case GradientClip::norm: {
      const float denom = clip::nan_max(clip::norm_of(*sum_squares, factor), limit);
      // Keras' order: (g * limit) / denom.
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) g[i] = g[i] * limit / denom;
      return;
    }
    case GradientClip::global_norm: {
      const float s = clip::global_scale(clip::norm_of(*sum_squares, factor), limit);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) g[i] *= s;
      return;
    }
    case GradientClip::value: {
      // A gradient scaled by S is clipped at limit * S (= limit / factor, exact).
      const float hi = limit / factor, lo = -hi;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) g[i] = g[i] < lo ? lo : (g[i] > hi ? hi : g[i]);
      return;
    }
  }
}

}  // namespace drun::kernels::cpu

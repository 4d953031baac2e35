#include "kernels/optimizer_update.hpp"

#include <cmath>

// Each rule has one loop per variant (momentum or not, centered or not) so that
// no branch sits inside a loop; the weight-decay term is always computed (with
// weight_decay 0 it leaves w as it is), which keeps one loop instead of two.
// The build passes -fno-math-errno, so sqrt vectorises.

namespace drun::kernels::cpu {

void sgd(float* __restrict w, const float* __restrict g, int64_t n, const float* step,
         float weight_decay) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float wi = w[i] - w[i] * weight_decay * decay_lr;
    const float gi = g[i] * g_factor;
    w[i] = wi - lr * gi;
  }
}

void sgd_momentum(float* __restrict w, const float* __restrict g, float* __restrict v, int64_t n,
                  const float* step, float momentum, bool nesterov, float weight_decay) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  if (nesterov) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float vi = v[i] * momentum - gi * lr;
      v[i] = vi;
      w[i] = wi + (vi * momentum - gi * lr);
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float vi = v[i] * momentum - gi * lr;
      v[i] = vi;
      w[i] = wi + vi;
    }
  }
}

void adagrad(float* __restrict w, const float* __restrict g, float* __restrict acc, int64_t n,
             const float* step, float epsilon, float weight_decay) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float wi = w[i] - w[i] * weight_decay * decay_lr;
    const float gi = g[i] * g_factor;
    const float ai = acc[i] + gi * gi;
    acc[i] = ai;
    w[i] = wi - (gi * lr / (std::sqrt(ai) + epsilon));
  }
}

void adam(float* __restrict w, const float* __restrict g, float* __restrict m, float* __restrict v,
          float* __restrict vhat, int64_t n, const float* step, float one_minus_b1,
          float one_minus_b2, float epsilon, float weight_decay) {
  if (step[kSkip] != 0.f) return;
  const float lr_t = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  if (vhat) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float mi = m[i] + (gi - m[i]) * one_minus_b1;
      const float vi = v[i] + (gi * gi - v[i]) * one_minus_b2;
      const float hi = vhat[i] < vi ? vi : vhat[i];
      m[i] = mi;
      v[i] = vi;
      vhat[i] = hi;
      w[i] = wi - (mi * lr_t / (std::sqrt(hi) + epsilon));
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float mi = m[i] + (gi - m[i]) * one_minus_b1;
      const float vi = v[i] + (gi * gi - v[i]) * one_minus_b2;
      m[i] = mi;
      v[i] = vi;
      w[i] = wi - (mi * lr_t / (std::sqrt(vi) + epsilon));
    }
  }
}

void rmsprop(float* __restrict w, const float* __restrict g, float* __restrict rms,
             float* __restrict mg, int64_t n, const float* step, float rho, float epsilon,
             float weight_decay) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  const float one_minus_rho = 1.f - rho;
  if (mg) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float ri = rho * rms[i] + one_minus_rho * gi * gi;
      const float mgi = rho * mg[i] + one_minus_rho * gi;
      rms[i] = ri;
      mg[i] = mgi;
      w[i] = wi - (lr * gi / (std::sqrt(ri - mgi * mgi) + epsilon));
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float ri = rho * rms[i] + one_minus_rho * gi * gi;
      rms[i] = ri;
      w[i] = wi - (lr * gi / (std::sqrt(ri) + epsilon));
    }
  }
}

void rmsprop_momentum(float* __restrict w, const float* __restrict g, float* __restrict rms,
                      float* __restrict mg, float* __restrict mom, int64_t n, const float* step,
                      float rho, float momentum, float epsilon, float weight_decay) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  const float one_minus_rho = 1.f - rho;
  if (mg) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float ri = rms[i] + (gi * gi - rms[i]) * one_minus_rho;
      const float mgi = mg[i] + (gi - mg[i]) * one_minus_rho;
      const float mi = mom[i] * momentum + gi * lr / std::sqrt(ri - mgi * mgi + epsilon);
      rms[i] = ri;
      mg[i] = mgi;
      mom[i] = mi;
      w[i] = wi - mi;
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float wi = w[i] - w[i] * weight_decay * decay_lr;
      const float gi = g[i] * g_factor;
      const float ri = rms[i] + (gi * gi - rms[i]) * one_minus_rho;
      const float mi = mom[i] * momentum + gi * lr / std::sqrt(ri + epsilon);
      rms[i] = ri;
      mom[i] = mi;
      w[i] = wi - mi;
    }
  }
}

}  // namespace drun::kernels::cpu

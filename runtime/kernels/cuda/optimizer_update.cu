// The optimizer updates of optimizer_update.hpp: one grid-stride pass each,
// with the expressions written in the CPU's order so that the results agree
// to rounding. The variants (Nesterov, AMSGrad, centered) are template
// arguments, so no branch sits in the loop.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/optimizer_update.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

__global__ void sgd_kernel(float* w, const float* g, int64_t n, const float* step, float wd) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float wi = w[i] - w[i] * wd * decay_lr;
    const float gi = g[i] * g_factor;
    w[i] = wi - lr * gi;
  }
}

template <bool kNesterov>
__global__ void sgd_momentum_kernel(float* w, const float* g, float* v, int64_t n,
                                    const float* step, float momentum, float wd) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float wi = w[i] - w[i] * wd * decay_lr;
    const float gi = g[i] * g_factor;
    const float vi = v[i] * momentum - gi * lr;
    v[i] = vi;
    w[i] = wi + (kNesterov ? vi * momentum - gi * lr : vi);
  }
}

__global__ void adagrad_kernel(float* w, const float* g, float* acc, int64_t n, const float* step,
                               float epsilon, float wd) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float wi = w[i] - w[i] * wd * decay_lr;
    const float gi = g[i] * g_factor;
    const float ai = acc[i] + gi * gi;
    acc[i] = ai;
    w[i] = wi - (gi * lr / (sqrtf(ai) + epsilon));
  }
}

template <bool kAmsgrad>
__global__ void adam_kernel(float* w, const float* g, float* m, float* v, float* vhat, int64_t n,
                            const float* step, float one_minus_b1, float one_minus_b2,
                            float epsilon, float wd) {
  if (step[kSkip] != 0.f) return;
  const float lr_t = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float wi = w[i] - w[i] * wd * decay_lr;
    const float gi = g[i] * g_factor;
    const float mi = m[i] + (gi - m[i]) * one_minus_b1;
    const float vi = v[i] + (gi * gi - v[i]) * one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    float denom = vi;
    if constexpr (kAmsgrad) {
      denom = vhat[i] < vi ? vi : vhat[i];
      vhat[i] = denom;
    }
    w[i] = wi - (mi * lr_t / (sqrtf(denom) + epsilon));
  }
}

template <bool kCentered>
__global__ void rmsprop_kernel(float* w, const float* g, float* rms, float* mg, int64_t n,
                               const float* step, float rho, float one_minus_rho, float epsilon,
                               float wd) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float wi = w[i] - w[i] * wd * decay_lr;
    const float gi = g[i] * g_factor;
    const float ri = rho * rms[i] + one_minus_rho * gi * gi;
    rms[i] = ri;
    float denom = ri;
    if constexpr (kCentered) {
      const float mgi = rho * mg[i] + one_minus_rho * gi;
      mg[i] = mgi;
      denom = ri - mgi * mgi;
    }
    w[i] = wi - (lr * gi / (sqrtf(denom) + epsilon));
  }
}

template <bool kCentered>
__global__ void rmsprop_momentum_kernel(float* w, const float* g, float* rms, float* mg, float* mom,
                                        int64_t n, const float* step, float one_minus_rho,
                                        float momentum, float epsilon, float wd) {
  if (step[kSkip] != 0.f) return;
  const float lr = step[kRate], g_factor = step[kGradFactor];
  const float decay_lr = step[kLearningRate];
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float wi = w[i] - w[i] * wd * decay_lr;
    const float gi = g[i] * g_factor;
    const float ri = rms[i] + (gi * gi - rms[i]) * one_minus_rho;
    rms[i] = ri;
    float denom = ri;
    if constexpr (kCentered) {
      const float mgi = mg[i] + (gi - mg[i]) * one_minus_rho;
      mg[i] = mgi;
      denom = ri - mgi * mgi;
    }
    const float mi = mom[i] * momentum + gi * lr / sqrtf(denom + epsilon);
    mom[i] = mi;
    w[i] = wi - mi;
  }
}

}  // namespace

void sgd(float* w, const float* g, int64_t n, const float* step, float weight_decay) {
  sgd_kernel<<<blocks_for(n), kThreads>>>(w, g, n, step, weight_decay);
  check_launch("sgd");
}

void sgd_momentum(float* w, const float* g, float* v, int64_t n, const float* step, float momentum,
                  bool nesterov, float weight_decay) {
  if (nesterov)
    sgd_momentum_kernel<true>
        <<<blocks_for(n), kThreads>>>(w, g, v, n, step, momentum, weight_decay);
  else
    sgd_momentum_kernel<false>
        <<<blocks_for(n), kThreads>>>(w, g, v, n, step, momentum, weight_decay);
  check_launch("sgd_momentum");
}

void adagrad(float* w, const float* g, float* acc, int64_t n, const float* step, float epsilon,
             float weight_decay) {
  adagrad_kernel<<<blocks_for(n), kThreads>>>(w, g, acc, n, step, epsilon, weight_decay);
  check_launch("adagrad");
}

void adam(float* w, const float* g, float* m, float* v, float* vhat, int64_t n, const float* step,
          float one_minus_b1, float one_minus_b2, float epsilon, float weight_decay) {
  if (vhat)
    adam_kernel<true><<<blocks_for(n), kThreads>>>(w, g, m, v, vhat, n, step, one_minus_b1,
                                                   one_minus_b2, epsilon, weight_decay);
  else
    adam_kernel<false><<<blocks_for(n), kThreads>>>(w, g, m, v, vhat, n, step, one_minus_b1,
                                                    one_minus_b2, epsilon, weight_decay);
  check_launch("adam");
}

void rmsprop(float* w, const float* g, float* rms, float* mg, int64_t n, const float* step,
             float rho, float epsilon, float weight_decay) {
  if (mg)
    rmsprop_kernel<true><<<blocks_for(n), kThreads>>>(w, g, rms, mg, n, step, rho, 1.f - rho,
                                                      epsilon, weight_decay);
  else
    rmsprop_kernel<false><<<blocks_for(n), kThreads>>>(w, g, rms, mg, n, step, rho, 1.f - rho,
                                                       epsilon, weight_decay);
  check_launch("rmsprop");
}

void rmsprop_momentum(float* w, const float* g, float* rms, float* mg, float* mom, int64_t n,
                      const float* step, float rho, float momentum, float epsilon,
                      float weight_decay) {
  if (mg)
    rmsprop_momentum_kernel<true><<<blocks_for(n), kThreads>>>(
        w, g, rms, mg, mom, n, step, 1.f - rho, momentum, epsilon, weight_decay);
  else
    rmsprop_momentum_kernel<false><<<blocks_for(n), kThreads>>>(
        w, g, rms, mg, mom, n, step, 1.f - rho, momentum, epsilon, weight_decay);
  check_launch("rmsprop_momentum");
}

}  // namespace drun::kernels::cuda

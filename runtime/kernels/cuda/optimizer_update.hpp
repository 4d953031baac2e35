// Optimizer updates on the GPU, mirroring kernels/cpu/optimizer_update.hpp
// (which states each rule) on device pointers: one fused pass over a
// parameter, its gradient and its slots. Each launches on the default stream
// and returns at once. Arrays must not overlap.
#pragma once
#include <cstdint>

namespace drun::kernels::cuda {

void sgd(float* w, const float* g, int64_t n, float lr, float weight_decay = 0.f);
void sgd_momentum(float* w, const float* g, float* v, int64_t n, float lr, float momentum,
                  bool nesterov, float weight_decay = 0.f);
void adagrad(float* w, const float* g, float* acc, int64_t n, float lr, float epsilon,
             float weight_decay = 0.f);
// `vhat` null: Adam; non-null: AMSGrad.
void adam(float* w, const float* g, float* m, float* v, float* vhat, int64_t n, float lr_t,
          float beta_1, float beta_2, float epsilon, float weight_decay = 0.f);
// `mg` null: plain RMSprop; non-null: centered.
void rmsprop(float* w, const float* g, float* rms, float* mg, int64_t n, float lr, float rho,
             float epsilon, float weight_decay = 0.f);
void rmsprop_momentum(float* w, const float* g, float* rms, float* mg, float* mom, int64_t n,
                      float lr, float rho, float momentum, float epsilon, float weight_decay = 0.f);

}  // namespace drun::kernels::cuda

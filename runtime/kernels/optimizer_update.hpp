// Optimizer updates: one pass over a parameter, its gradient and the
// optimizer's slot tensors. Every rule is the one tf.keras (optimizer_v2,
// Keras 2) applies, in the form of TensorFlow's training ops, so the results
// match TensorFlow to rounding. One declaration for both backends:
// kernels/cpu/optimizer_update.cpp (plain loops that GCC vectorises at -O3)
// on host pointers, kernels/cuda/optimizer_update.cu (one fused kernel each,
// launched on the default stream, returning at once) on device pointers.
//
// `weight_decay` is Keras 3's decoupled decay (its base optimizer's
// _apply_weight_decay), applied before the rule: w = w - w * weight_decay * lr
// with lr = step[kLearningRate]; the rule then sees g' = g * step[kGradFactor]
// and the decayed w. Arrays must not overlap.
//
// `step` holds the step's values, kStepValues floats in the same memory as w,
// read where the update runs: a step captured into a CUDA graph reads each
// replay's values from there, where an argument would stay the capture's.
//   step[kRate]        the learning rate lr (Adam's lr_t);
//   step[kLearningRate] the schedule's rate, before Adam's bias correction:
//                      what weight decay multiplies;
//   step[kGradFactor]  what the gradient is multiplied by first: 1 / the loss
//                      scale (a power of two, so exact), else 1;
//   step[kSkip]        nonzero where the step is skipped (a gradient overflowed
//                      under a loss scale): then nothing is written at all.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

enum StepValue : int { kRate = 0, kGradFactor = 1, kSkip = 2, kLearningRate = 3, kStepValues = 4 };

DRUN_CPU_AND_CUDA(
    // w -= lr * g'
    void sgd(float* w, const float* g, int64_t n, const float* step, float weight_decay = 0.f);

    // v = momentum * v - lr * g'; w += v, or with nesterov w += momentum * v - lr * g'.
    void sgd_momentum(float* w, const float* g, float* v, int64_t n, const float* step,
                      float momentum, bool nesterov, float weight_decay = 0.f);

    // acc += g'^2; w -= lr * g' / (sqrt(acc) + epsilon)
    void adagrad(float* w, const float* g, float* acc, int64_t n, const float* step, float epsilon,
                 float weight_decay = 0.f);

    // m += (g' - m) * (1 - beta_1); v += (g'^2 - v) * (1 - beta_2);
    // w -= lr_t * m / (sqrt(v) + epsilon), where the caller folds the bias correction
    // into lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), and gives 1 - beta_1
    // and 1 - beta_2 (Keras 3 rounds them from double: 1 - 0.999 is 0.001f, where
    // 1.f - 0.999f would be 0.00099998713).
    // With `vhat` non-null (AMSGrad): vhat = max(vhat, v) and vhat replaces v in the step.
    void adam(float* w, const float* g, float* m, float* v, float* vhat, int64_t n,
              const float* step, float one_minus_beta_1, float one_minus_beta_2, float epsilon,
              float weight_decay = 0.f);

    // tf.keras RMSprop without momentum (epsilon outside the square root):
    // rms = rho * rms + (1 - rho) * g'^2; with `mg` non-null (centered)
    // mg = rho * mg + (1 - rho) * g' and denom = rms - mg^2, else denom = rms;
    // w -= lr * g' / (sqrt(denom) + epsilon)
    void rmsprop(float* w, const float* g, float* rms, float* mg, int64_t n, const float* step,
                 float rho, float epsilon, float weight_decay = 0.f);

    // tf.keras RMSprop with momentum (TensorFlow's ApplyRMSProp / ApplyCenteredRMSProp,
    // epsilon inside the square root): rms += (g'^2 - rms) * (1 - rho); centered:
    // mg += (g' - mg) * (1 - rho), denom = rms - mg^2 + epsilon, else denom = rms + epsilon;
    // mom = momentum * mom + lr * g' / sqrt(denom); w -= mom
    void rmsprop_momentum(float* w, const float* g, float* rms, float* mg, float* mom, int64_t n,
                          const float* step, float rho, float momentum, float epsilon,
                          float weight_decay = 0.f);)

}  // namespace drun::kernels

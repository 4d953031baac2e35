// The recurrent steps of kernels/recurrent.hpp on the GPU: one grid-stride
// launch of the step's functor over its B * U units.
#include <cuda_runtime.h>

#include <stdexcept>
#include <type_traits>

#include "kernels/cuda/launch.cuh"
#include "kernels/recurrent.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

template <class F>
__global__ void each_unit_kernel(F f, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) f(i / f.s.units, i % f.s.units);
}

template <class F>
void each_unit(const F& f, const char* what) {
  const int64_t n = f.s.batch * f.s.units;
  if (n <= 0) return;
  each_unit_kernel<<<blocks_for(n), kThreads>>>(f, n);
  check_launch(what);
}

template <class F>
constexpr bool kStepActivation = !std::is_same_v<F, act::Softmax> && !F::kReadsInput;

}  // namespace

void rnn_step(const LstmStepForward& f, int) {
  each_unit(f, "lstm_step_forward");
}
void rnn_step(const LstmStepBackward& f, int) {
  each_unit(f, "lstm_step_backward");
}
void rnn_step(const GruStepForward& f, int) {
  each_unit(f, "gru_step_forward");
}
void rnn_step(const GruResetForward& f, int) {
  each_unit(f, "gru_reset_forward");
}
void rnn_step(const GruStepBackward& f, int) {
  each_unit(f, "gru_step_backward");
}
void rnn_step(const GruResetBackward& f, int) {
  each_unit(f, "gru_reset_backward");
}

void simple_rnn_step_forward(ActivationFn a, const RnnStepShape& s, const float* xp,
                             const float* hr, float* h, float* seq, int) {
  visit_activation(a, [&](auto act) {
    using F = decltype(act);
    if constexpr (kStepActivation<F>)
      each_unit(SimpleRnnStepForward<F>{s, act, xp, hr, h, seq}, "simple_rnn_step_forward");
    else
      throw std::logic_error("simple_rnn_step_forward: not an activation of the fused step");
  });
}

void simple_rnn_step_backward(ActivationFn a, const RnnStepShape& s, const float* dseq,
                              const float* h, const float* dh, float* dz, float* dzx, int) {
  visit_activation(a, [&](auto act) {
    using F = decltype(act);
    if constexpr (kStepActivation<F>)
      each_unit(SimpleRnnStepBackward<F>{s, act, dseq, h, dh, dz, dzx}, "simple_rnn_step_backward");
    else
      throw std::logic_error("simple_rnn_step_backward: not an activation of the fused step");
  });
}

}  // namespace drun::kernels::cuda

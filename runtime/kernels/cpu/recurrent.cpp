// The recurrent steps of kernels/recurrent.hpp on the CPU: the functor over
// every (b, j), batch rows split over the rank's threads where the step is
// large enough to pay for a parallel region.
#include "kernels/recurrent.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"

namespace drun::kernels::cpu {

namespace {

// Below this many units of work a step stays on one thread: each step is a
// fork and join otherwise, and T steps pay it T times.
constexpr int64_t kUnitsPerThread = 1 << 13;

template <class F>
void each_unit(const F& f, int threads) {
  const int64_t rows = f.s.batch, u = f.s.units;
  for_each_chunk(rows, threads, std::max<int64_t>(1, kUnitsPerThread / std::max<int64_t>(1, u)),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t b = b0; b < b1; ++b)
                     for (int64_t j = 0; j < u; ++j) f(b, j);
                 });
}

template <class F>
constexpr bool kStepActivation = !std::is_same_v<F, act::Softmax> && !F::kReadsInput;

}  // namespace

// The LSTM's steps run the instruction set's vector variant of the functor
// (isa/recurrent_impl.hpp): its gates' sigmoids and tanhs are most of a step
// outside the GEMM. About seven times faster per unit than the scalar functor,
// so a thread's share is smaller: 2,048 units (about 10 us of an LSTM 256's
// step, a fork and join about 2) and the batch of 32 splits over 2 threads.
constexpr int64_t kVectorUnitsPerThread = 1 << 11;

template <class F, class Rows>
void each_row(const F& f, Rows rows, int threads) {
  const int64_t grain =
      std::max<int64_t>(1, kVectorUnitsPerThread / std::max<int64_t>(1, f.s.units));
  for_each_chunk(f.s.batch, threads, grain, [&](int64_t b0, int64_t b1) { rows(f, b0, b1); });
}

void rnn_step(const LstmStepForward& f, int threads) {
  each_row(f, cpu_kernels().lstm_step_forward, threads);
}
void rnn_step(const LstmStepBackward& f, int threads) {
  each_row(f, cpu_kernels().lstm_step_backward, threads);
}
void rnn_step(const GruStepForward& f, int threads) {
  each_unit(f, threads);
}
void rnn_step(const GruResetForward& f, int threads) {
  each_unit(f, threads);
}
void rnn_step(const GruStepBackward& f, int threads) {
  each_unit(f, threads);
}
void rnn_step(const GruResetBackward& f, int threads) {
  each_unit(f, threads);
}

void simple_rnn_step_forward(ActivationFn a, const RnnStepShape& s, const float* xp,
                             const float* hr, float* h, float* seq, int threads) {
  visit_activation(a, [&](auto act) {
    using F = decltype(act);
    if constexpr (kStepActivation<F>)
      each_unit(SimpleRnnStepForward<F>{s, act, xp, hr, h, seq}, threads);
    else
      throw std::logic_error("simple_rnn_step_forward: not an activation of the fused step");
  });
}

void simple_rnn_step_backward(ActivationFn a, const RnnStepShape& s, const float* dseq,
                              const float* h, const float* dh, float* dz, float* dzx, int threads) {
  visit_activation(a, [&](auto act) {
    using F = decltype(act);
    if constexpr (kStepActivation<F>)
      each_unit(SimpleRnnStepBackward<F>{s, act, dseq, h, dh, dz, dzx}, threads);
    else
      throw std::logic_error("simple_rnn_step_backward: not an activation of the fused step");
  });
}

}  // namespace drun::kernels::cpu

// The LSTM's time loop on the CPU (kernels' lstm_sequence_forward and
// lstm_sequence_backward): one parallel region for the whole sequence, each
// thread owning a range of units. A unit's four gate columns of the step's
// GEMM and its step are then the same thread's, so a step needs one barrier
// (before the next GEMM reads every unit's h, or every gate's dz), where an
// op per GEMM and per step forks and joins twice (on 2 threads about an
// eighth of an LSTM 256's training step, at batch 32, went to waiting).
#pragma once
#include <cstdint>

namespace drun::kernels::cpu {

struct LstmSequenceForward {
  int64_t batch, steps, units;  // B, T, U
  bool go_backwards;
  const float *xp, *recurrent;  // (B, T, 4U), (U, 4U)
  float *hr, *hs, *cs, *gates;  // (B, 4U); (T+1, B, U) twice; (T, B, 4U)
  float* seq;                   // (B, T, U) or null
};

struct LstmSequenceBackward {
  int64_t batch, steps, units;
  bool go_backwards, dh_first;
  const float *dseq, *gates, *cs, *recurrent_t;  // dseq may be null; R^T (4U, U)
  float *dh, *dc, *dz, *dzx;                     // (B, U) twice; (T, B, 4U); (B, T, 4U)
};

void lstm_sequence_forward(const LstmSequenceForward& q, int threads);
void lstm_sequence_backward(const LstmSequenceBackward& q, int threads);

}  // namespace drun::kernels::cpu

#include "kernels/cpu/lstm_sequence.hpp"

#include <omp.h>

#include <algorithm>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"
#include "kernels/recurrent.hpp"

namespace drun::kernels::cpu {

namespace {

// Units are shared out in blocks of 32: two vectors of the widest variant,
// the few-rows GEMM's widest tile.
constexpr int64_t kUnitBlock = 32;

// Threads for a sequence: all of them where a step's GEMM is worth
// splitting (the few-rows GEMM's rule, cpu/gemm.cpp: ~4 MFLOP), else one.
int team_for(int64_t batch, int64_t units, int threads) {
  return 2.0 * batch * units * 4 * units < 4e6 ? 1 : threads;
}

// Runs body(j0, j1) on each thread of the team with its range of units (empty
// on a thread left without one: it still meets every barrier).
template <class F>
void by_units(int64_t units, int team, F&& body) {
  const int64_t blocks = (units + kUnitBlock - 1) / kUnitBlock;
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(team, blocks)));
  for_each_range(parts, parts, [&](int64_t part, int64_t, int64_t) {
    const int64_t per = (blocks + parts - 1) / parts;
    const int64_t j0 = std::min(units, part * per * kUnitBlock);
    const int64_t j1 = std::min(units, (part + 1) * per * kUnitBlock);
    body(j0, j1);
  });
}

}  // namespace

void lstm_sequence_forward(const LstmSequenceForward& q, int threads) {
  const CpuKernels& k = cpu_kernels();
  const int64_t b = q.batch, t = q.steps, u = q.units, g = 4 * u, state = b * u;
  by_units(u, team_for(b, u, threads), [&](int64_t j0, int64_t j1) {
    for (int64_t s = 0; s < t; ++s) {
      if (j0 < j1) {
        // This thread's columns of h_s R: its units of each gate's block.
        for (int64_t gate = 0; gate < 4; ++gate)
          k.gemm_nn_small_m(b, u, 1.0f, q.hs + s * state, u, q.recurrent, g, 0.0f, q.hr, g,
                            gate * u + j0, gate * u + j1);
        const LstmStepForward f{{b, t, u, q.go_backwards ? t - 1 - s : s, s},
                                q.xp,
                                q.hr,
                                q.cs + s * state,
                                q.gates + s * b * g,
                                q.cs + (s + 1) * state,
                                q.hs + (s + 1) * state,
                                q.seq};
        k.lstm_step_forward(f, 0, b, j0, j1);
      }
      // Step s + 1's GEMM reads every thread's units of h.
#pragma omp barrier
    }
  });
}

void lstm_sequence_backward(const LstmSequenceBackward& q, int threads) {
  const CpuKernels& k = cpu_kernels();
  const int64_t b = q.batch, t = q.steps, u = q.units, g = 4 * u, state = b * u;
  by_units(u, team_for(b, u, threads), [&](int64_t j0, int64_t j1) {
    for (int64_t s = t - 1; s >= 0; --s) {
      float* dz = q.dz + s * b * g;
      if (j0 < j1) {
        const LstmStepBackward f{{b, t, u, q.go_backwards ? t - 1 - s : s, s},
                                 q.dseq,
                                 q.gates + s * b * g,
                                 q.cs + (s + 1) * state,
                                 q.cs + s * state,
                                 q.dh,
                                 q.dc,
                                 dz,
                                 q.dzx};
        k.lstm_step_backward(f, 0, b, j0, j1);
      }
      if (s == 0 && !q.dh_first) break;
        // d(h_{s-1}) of this thread's units reads every unit's dz.
#pragma omp barrier
      if (j0 < j1) k.gemm_nn_small_m(b, g, 1.0f, dz, g, q.recurrent_t, u, 0.0f, q.dh, u, j0, j1);
    }
  });
}

}  // namespace drun::kernels::cpu

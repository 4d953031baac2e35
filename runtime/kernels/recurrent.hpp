// One time step of the recurrent layers (nn/lstm.cpp, nn/gru.cpp,
// nn/simple_rnn.cpp), fused: the gates' nonlinearities and the state update
// of every (batch row b, unit j), after the step's GEMM h_{t-1} R. Each
// step is a functor over (b, j) written once here, for the host and the
// device: kernels/cpu/recurrent.cpp loops over it, kernels/cuda/recurrent.cu
// launches it, so both backends compute the same formulas (Keras 3's cells).
//
// Layout. xp, the input projections x W + b of every step, is (B, T, G)
// batch-major as one GEMM over x (B, T, F) gives it: the step reads row
// b * T + t_x, a row stride of T * G, so no transpose copy is made. seq,
// the output sequence (B, T, U), gets h at time t_y (t_x and t_y differ
// with go_backwards: Keras returns the steps in the order it ran them).
// The states h, c and the step's gate buffers are contiguous (B, U) and
// (B, G): what the next GEMM reads. dzx, the gradient at xp, has xp's layout
// (one GEMM each for d(kernel) and d(input) at the end); dz/dzr are the
// step's gradient at h_{t-1} R, contiguous for the GEMMs d(h_{t-1}) and
// d(recurrent_kernel). The LSTM's gradients at xp and at hr are the same
// values: its step writes dz alone, from which the layer takes all three.
//
// Gate order as Keras stores them: LSTM i, f, c, o (G = 4U); GRU z, r, h
// (G = 3U). The LSTM keeps its gates' activations (B, 4U) for backward; the
// GRU keeps z, r, hh and the recurrent part of hh's pre-activation (B, 4U).
#pragma once
#include <cstdint>

#include "kernels/activation_list.hpp"
#include "kernels/types.hpp"

namespace drun::kernels {

// Where one step's work lies.
struct RnnStepShape {
  int64_t batch, steps, units;  // B, T, U
  int64_t t_x, t_y;             // the step's time in xp and in seq
  DRUN_HOST_DEVICE int64_t x_row(int64_t b) const { return b * steps + t_x; }
  DRUN_HOST_DEVICE int64_t y_row(int64_t b) const { return b * steps + t_y; }
};

namespace rnn {
DRUN_HOST_DEVICE inline float sigmoid(float x) {
  return act::Sigmoid{}.forward(x);
}
DRUN_HOST_DEVICE inline float tanh(float x) {
  return act::Tanh{}.forward(x);
}
}  // namespace rnn

// i, f, g, o = sig, sig, tanh, sig of xp + hr; c = f c_prev + i g; h = o tanh(c).
struct LstmStepForward {
  RnnStepShape s;
  const float *xp, *hr, *c_prev;
  float *gates, *c, *h, *seq;  // seq may be null
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float* x = xp + s.x_row(b) * 4 * u;
    const float* r = hr + b * 4 * u;
    float* a = gates + b * 4 * u;
    const float i = rnn::sigmoid(x[j] + r[j]);
    const float f = rnn::sigmoid(x[u + j] + r[u + j]);
    const float g = rnn::tanh(x[2 * u + j] + r[2 * u + j]);
    const float o = rnn::sigmoid(x[3 * u + j] + r[3 * u + j]);
    a[j] = i, a[u + j] = f, a[2 * u + j] = g, a[3 * u + j] = o;
    const float ct = f * c_prev[k] + i * g;
    const float ht = o * rnn::tanh(ct);
    c[k] = ct;
    h[k] = ht;
    if (seq) seq[s.y_row(b) * u + j] = ht;
  }
};

// dh (read): the gradient at h from the later steps, plus dseq's at t_y
// where given; dc: in, the gradient at c from the later steps; out, at c_prev.
// dz is the step's gradient at its pre-activations xp + hr, at both: the
// layer computes d(kernel) and d(input) from the steps' dz too (t_x unused).
struct LstmStepBackward {
  RnnStepShape s;
  const float *dseq, *gates, *c, *c_prev;  // dseq may be null
  const float* dh;
  float *dc, *dz;
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float* a = gates + b * 4 * u;
    const float i = a[j], f = a[u + j], g = a[2 * u + j], o = a[3 * u + j];
    const float dht = dh[k] + (dseq ? dseq[s.y_row(b) * u + j] : 0.0f);
    const float tc = rnn::tanh(c[k]);
    const float dct = dc[k] + dht * o * (1.0f - tc * tc);
    const float d[4] = {dct * g * i * (1.0f - i), dct * c_prev[k] * f * (1.0f - f),
                        dct * i * (1.0f - g * g), dht * tc * o * (1.0f - o)};
    dc[k] = dct * f;
    float* z = dz + b * 4 * u;
    for (int q = 0; q < 4; ++q) z[q * u + j] = d[q];
  }
};

// z, r = sig(xp + hr); hh = tanh(xp_h + r * hrh_h) after reset (reset_after,
// hrh = hr, the recurrent bias included), tanh(xp_h + hrh_h) before it
// (hrh = (r h_prev) R); h = z h_prev + (1 - z) hh.
struct GruStepForward {
  RnnStepShape s;
  bool reset_after;
  const float *xp, *hr, *hrh, *h_prev;
  float *gates, *h, *seq;  // seq may be null
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float* x = xp + s.x_row(b) * 3 * u;
    const float* r = hr + b * 3 * u;
    const float z = rnn::sigmoid(x[j] + r[j]);
    const float rt = rnn::sigmoid(x[u + j] + r[u + j]);
    const float rec = hrh[b * 3 * u + 2 * u + j];
    const float hh = rnn::tanh(x[2 * u + j] + (reset_after ? rt * rec : rec));
    float* a = gates + b * 4 * u;
    a[j] = z, a[u + j] = rt, a[2 * u + j] = hh, a[3 * u + j] = rec;
    const float ht = z * h_prev[k] + (1.0f - z) * hh;
    h[k] = ht;
    if (seq) seq[s.y_row(b) * u + j] = ht;
  }
};

// Before the reset (reset_after false): rh = r h_prev, the operand of the
// step's second GEMM.
struct GruResetForward {
  RnnStepShape s;
  const float *xp, *hr, *h_prev;
  float* rh;
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float* x = xp + s.x_row(b) * 3 * u;
    rh[k] = rnn::sigmoid(x[u + j] + hr[b * 3 * u + u + j]) * h_prev[k];
  }
};

// dh: in, the gradient at h from the later steps (plus dseq's at t_y); out,
// its direct part at h_prev (dh z). dzr: the gradient at hr. After the reset,
// complete; before it, its z block (the r block is GruResetBackward's, h's
// zero) and dzh = [0, 0, d(hrh)], whose GEMM gives GruResetBackward's drh.
struct GruStepBackward {
  RnnStepShape s;
  bool reset_after;
  const float *dseq, *gates, *h_prev;  // dseq may be null
  float *dh, *dzx, *dzr, *dzh;         // dzh: before the reset only
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float* a = gates + b * 4 * u;
    const float z = a[j], rt = a[u + j], hh = a[2 * u + j], rec = a[3 * u + j];
    const float dht = dh[k] + (dseq ? dseq[s.y_row(b) * u + j] : 0.0f);
    const float dz = dht * (h_prev[k] - hh) * z * (1.0f - z);
    const float dhh = dht * (1.0f - z) * (1.0f - hh * hh);
    dh[k] = dht * z;
    float* zx = dzx + s.x_row(b) * 3 * u;
    float* zr = dzr + b * 3 * u;
    zx[j] = zr[j] = dz;
    zx[2 * u + j] = dhh;
    if (reset_after) {
      const float dr = dhh * rec * rt * (1.0f - rt);
      zx[u + j] = zr[u + j] = dr;
      zr[2 * u + j] = dhh * rt;
    } else {
      zr[2 * u + j] = 0.0f;
      float* zh = dzh + b * 3 * u;
      zh[j] = zh[u + j] = 0.0f;
      zh[2 * u + j] = dhh;
    }
  }
};

// Before the reset: from drh, the gradient at r h_prev, the r blocks of dzx
// and dzr, and dh += drh r.
struct GruResetBackward {
  RnnStepShape s;
  const float *gates, *h_prev, *drh;
  float *dh, *dzx, *dzr;
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float rt = gates[b * 4 * u + u + j];
    const float dr = drh[k] * h_prev[k] * rt * (1.0f - rt);
    dzx[s.x_row(b) * 3 * u + u + j] = dzr[b * 3 * u + u + j] = dr;
    dh[k] += drh[k] * rt;
  }
};

// h = act(xp + hr), act one of activation_list.hpp's elementwise functors
// whose backward reads only its output.
template <class F>
struct SimpleRnnStepForward {
  RnnStepShape s;
  F act;
  const float *xp, *hr;
  float *h, *seq;  // seq may be null
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float ht = act.forward(xp[s.x_row(b) * u + j] + hr[k]);
    h[k] = ht;
    if (seq) seq[s.y_row(b) * u + j] = ht;
  }
};

// dz = dzx at t_x = act'(the step's pre-activation) (dh + dseq at t_y), from h.
template <class F>
struct SimpleRnnStepBackward {
  RnnStepShape s;
  F act;
  const float *dseq, *h, *dh;  // dseq may be null
  float *dz, *dzx;
  DRUN_HOST_DEVICE void operator()(int64_t b, int64_t j) const {
    const int64_t u = s.units, k = b * u + j;
    const float dht = dh[k] + (dseq ? dseq[s.y_row(b) * u + j] : 0.0f);
    dz[k] = dzx[s.x_row(b) * u + j] = act.backward(0.0f, h[k], dht);
  }
};

// Whether SimpleRNN's fused step takes activation a: elementwise, with a
// backward from its output alone.
constexpr bool simple_rnn_activation_ok(ActivationFn a) {
  return a.kind != Activation::softmax && !a.reads_input();
}

DRUN_CPU_AND_CUDA(
    // Runs the functor for every (b, j) of its step; `threads` is the CPU's
    // budget (the GPU ignores it).
    void rnn_step(const LstmStepForward& f, int threads);
    void rnn_step(const LstmStepBackward& f, int threads);
    void rnn_step(const GruStepForward& f, int threads);
    void rnn_step(const GruResetForward& f, int threads);
    void rnn_step(const GruStepBackward& f, int threads);
    void rnn_step(const GruResetBackward& f, int threads);
    // SimpleRNN's, for activation a (simple_rnn_activation_ok).
    void simple_rnn_step_forward(ActivationFn a, const RnnStepShape& s, const float* xp,
                                 const float* hr, float* h, float* seq, int threads);
    void simple_rnn_step_backward(ActivationFn a, const RnnStepShape& s, const float* dseq,
                                  const float* h, const float* dh, float* dz, float* dzx,
                                  int threads);)

}  // namespace drun::kernels

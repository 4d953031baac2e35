// The recurrent ops' tensors as kernels/recurrent.hpp's step functors: one
// place for both backends' sides (cpu/ops_cpu.cpp, cuda/ops_cuda.cpp), which
// then run the functor with their own loop or launch.
#pragma once
#include "kernels/recurrent.hpp"
#include "tensor/tensor.hpp"

namespace drun::kernels::rnn_args {

// xs (B, T, G) and a (B, U) state, as ops.cpp's check_rnn_step has them.
inline RnnStepShape shape(const Tensor& xs, const Tensor& h, int64_t t_x, int64_t t_y) {
  return {h.dim(0), xs.dim(1), h.dim(1), t_x, t_y};
}
inline const float* data(const Tensor* t) {
  return t ? t->f32() : nullptr;
}
inline float* data(Tensor* t) {
  return t ? t->f32() : nullptr;
}

inline LstmStepForward lstm_forward(int64_t t_x, int64_t t_y, const Tensor& xp, const Tensor& hr,
                                    const Tensor& c_prev, Tensor& gates, Tensor& c, Tensor& h,
                                    Tensor* seq) {
  return {shape(xp, h, t_x, t_y),
          xp.f32(),
          hr.f32(),
          c_prev.f32(),
          gates.f32(),
          c.f32(),
          h.f32(),
          data(seq)};
}

// dseq (B, T, U) gives T where there is one; without it no row is looked up by time.
inline LstmStepBackward lstm_backward(int64_t t_y, const Tensor* dseq, const Tensor& gates,
                                      const Tensor& c, const Tensor& c_prev, const Tensor& dh,
                                      Tensor& dc, Tensor& dz) {
  const RnnStepShape s{dh.dim(0), dseq ? dseq->dim(1) : 1, dh.dim(1), 0, dseq ? t_y : 0};
  return {s, data(dseq), gates.f32(), c.f32(), c_prev.f32(), dh.f32(), dc.f32(), dz.f32()};
}

inline GruStepForward gru_forward(bool reset_after, int64_t t_x, int64_t t_y, const Tensor& xp,
                                  const Tensor& hr, const Tensor& hrh, const Tensor& h_prev,
                                  Tensor& gates, Tensor& h, Tensor* seq) {
  return {shape(xp, h, t_x, t_y), reset_after, xp.f32(), hr.f32(), hrh.f32(),
          h_prev.f32(),           gates.f32(), h.f32(),  data(seq)};
}

inline GruResetForward gru_reset_forward(int64_t t_x, const Tensor& xp, const Tensor& hr,
                                         const Tensor& h_prev, Tensor& rh) {
  return {shape(xp, rh, t_x, t_x), xp.f32(), hr.f32(), h_prev.f32(), rh.f32()};
}

inline GruStepBackward gru_backward(bool reset_after, int64_t t_x, int64_t t_y, const Tensor* dseq,
                                    const Tensor& gates, const Tensor& h_prev, Tensor& dh,
                                    Tensor& dzx, Tensor& dzr, Tensor* dzh) {
  return {shape(dzx, dh, t_x, t_y),
          reset_after,
          data(dseq),
          gates.f32(),
          h_prev.f32(),
          dh.f32(),
          dzx.f32(),
          dzr.f32(),
          data(dzh)};
}

inline GruResetBackward gru_reset_backward(int64_t t_x, const Tensor& gates, const Tensor& h_prev,
                                           const Tensor& drh, Tensor& dh, Tensor& dzx,
                                           Tensor& dzr) {
  return {shape(dzx, dh, t_x, t_x),
          gates.f32(),
          h_prev.f32(),
          drh.f32(),
          dh.f32(),
          dzx.f32(),
          dzr.f32()};
}

}  // namespace drun::kernels::rnn_args

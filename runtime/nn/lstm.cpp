// LSTM, Keras' cell: gates i, f, c, o in the kernel's column blocks (F, 4U),
// (U, 4U), bias (4U); c = f c_prev + i tanh(.), h = o tanh(c). The time loop
// is nn/recurrent.hpp's; the step is kernels' lstm_step_forward/backward.
#include "nn/copy_views.hpp"
#include "nn/recurrent.hpp"

namespace drun::nn {

namespace {

class Lstm final : public Recurrent {
 public:
  Lstm(Options& o, const std::string& name) : Recurrent(o, "LSTM", name, 4, true) {
    unit_forget_bias_ = o.get<bool>("unit_forget_bias");
  }
  const char* kind() const override { return "LSTM"; }
  int num_states() const override { return 2; }

  void forward(std::span<const Tensor* const> in, bool) override {
    begin_forward(in, bias());
    ensure(cs_, Shape{steps_ + 1, batch_, units_});
    ensure(gates_acts_, Shape{steps_, batch_, width()});
    Tensor c0 = at(cs_, 0);
    if (initial_state())
      kernels::cast(ex_, *in[2], c0);  // a copy; begin_forward checked its shape
    else
      kernels::fill(ex_, 0.0f, c0);
    for (int64_t s = 0; s < steps_; ++s) {
      const Tensor h_prev = at(hs_, s);
      Tensor gates = at(gates_acts_, s), c = at(cs_, s + 1), h = at(hs_, s + 1);
      kernels::matmul(ex_, false, false, batch_, width(), units_, 1.0f, h_prev, recurrent_kernel(),
                      0.0f, hr_);
      kernels::lstm_step_forward(ex_, t_x(s), s, xp_, hr_, at(cs_, s), gates, c, h, seq());
    }
    end_forward(&cs_);
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    begin_backward(dy, false);
    ensure(dc_, Shape{batch_, units_});
    if (const Tensor* dc_last = dstate(1))
      kernels::cast(ex_, *dc_last, dc_);
    else
      kernels::fill(ex_, 0.0f, dc_);
    // R^T once, so that every step's d(h_{t-1}) = dz R^T reads its operand
    // by rows: the CPU's GEMM for few rows streams B in place, and a
    // transposed B it can only read by dot products (1.6x slower at 32 x
    // 256 x 1024).
    ensure(recurrent_t_, Shape{width(), units_});
    kernels::strided_copy(ex_, transpose_geometry(units_, width()), recurrent_kernel(), 0.0f,
                          recurrent_t_);
    for (int64_t s = steps_ - 1; s >= 0; --s) {
      Tensor dz = at(dz_, s);
      kernels::lstm_step_backward(ex_, s, dseq(dy), at(gates_acts_, s), at(cs_, s + 1), at(cs_, s),
                                  dh_, dc_, dz);
      if (s > 0 || initial_state())  // else h_0 is the constant zero state
        kernels::matmul(ex_, false, false, batch_, units_, width(), 1.0f, dz, recurrent_t_, 0.0f,
                        dh_);
    }
    kernels::matmul(ex_, true, false, units_, width(), steps_ * batch_, 1.0f, hs_, dz_, 0.0f,
                    recurrent_kernel_grad());
    end_backward_by_steps(*in[0], dz_, need_dx[0], bias_grad());
    if (initial_state()) dx_[2] = dc_;  // the first step left d(c_0) there
  }

  json config() const override {
    json c = Recurrent::config();
    c["unit_forget_bias"] = unit_forget_bias_;
    return c;
  }

 private:
  // Keras adds 1 to the forget gate's bias (Jozefowicz et al.).
  void init_bias(Tensor& b) const override {
    if (!unit_forget_bias_) return;
    float* v = b.f32();
    for (int64_t j = units_; j < 2 * units_; ++j) v[j] = 1.0f;
  }

  bool unit_forget_bias_ = true;
  Tensor cs_;           // (T + 1, B, U): the cell states, cs[0] = 0
  Tensor gates_acts_;   // (T, B, 4U): each step's i, f, c, o
  Tensor dc_;           // (B, U)
  Tensor recurrent_t_;  // (4U, U): the recurrent kernel transposed, for backward
};

}  // namespace

const LayerInfo& lstm_layer() {
  static const LayerInfo info{
      .about = {.names = {"LSTM"},
                .doc = "long short-term memory over (batch, time, features): Keras' cell",
                .schema = recurrent_schema(true, {{"unit_forget_bias", OptionType::boolean, true,
                                                   "start the forget gate's bias at 1"}}),
                .positional = {"units"}},
      .make = [](Options& o, const std::string& name) { return std::make_unique<Lstm>(o, name); },
      .from_keras = recurrent_from_keras};
  return info;
}

}  // namespace drun::nn

// GRU, Keras' cell: gates z, r, h in the kernel's column blocks (F, 3U),
// (U, 3U); h = z h_prev + (1 - z) hh. reset_after (Keras 3's default, the
// cuDNN form): hh = tanh(x Wh + b_in + r (h_prev Rh + b_rec)), bias (2, 3U);
// before it (Keras 2's default): hh = tanh(x Wh + (r h_prev) Rh + b), bias
// (3U), which takes a second GEMM per step. The time loop is
// nn/recurrent.hpp's; the step is kernels' gru_* ops.
#include "nn/recurrent.hpp"

namespace drun::nn {

namespace {

class Gru final : public Recurrent {
 public:
  Gru(Options& o, const std::string& name) : Recurrent(o, "GRU", name, 3, true) {
    reset_after_ = o.get<bool>("reset_after");
  }
  const char* kind() const override { return "GRU"; }

  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor* b = bias();
    const Tensor b_in = b && reset_after_ ? b->rows(0, 1) : Tensor();
    begin_forward(in, reset_after_ && b ? &b_in : b);
    ensure(gates_acts_, Shape{steps_, batch_, 4 * units_});
    if (!reset_after_) {
      ensure(rhs_, Shape{steps_, batch_, units_});
      ensure(hr2_, Shape{batch_, width()});
    }
    for (int64_t s = 0; s < steps_; ++s) {
      const Tensor h_prev = at(hs_, s);
      Tensor gates = at(gates_acts_, s), h = at(hs_, s + 1);
      kernels::matmul(ex_, false, false, batch_, width(), units_, 1.0f, h_prev, recurrent_kernel(),
                      0.0f, hr_);
      if (reset_after_) {
        if (b) kernels::bias_add(ex_, hr_, b->rows(1, 2));
        kernels::gru_step_forward(ex_, true, t_x(s), s, xp_, hr_, hr_, h_prev, gates, h, seq());
      } else {
        Tensor rh = at(rhs_, s);
        kernels::gru_reset_forward(ex_, t_x(s), xp_, hr_, h_prev, rh);
        kernels::matmul(ex_, false, false, batch_, width(), units_, 1.0f, rh, recurrent_kernel(),
                        0.0f, hr2_);
        kernels::gru_step_forward(ex_, false, t_x(s), s, xp_, hr_, hr2_, h_prev, gates, h, seq());
      }
    }
    end_forward();
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    begin_backward(dy);
    if (!reset_after_) {
      ensure(dzh_, Shape{steps_, batch_, width()});
      ensure(drh_, Shape{batch_, units_});
    }
    for (int64_t s = steps_ - 1; s >= 0; --s) {
      const Tensor h_prev = at(hs_, s), gates = at(gates_acts_, s);
      Tensor dzr = at(dz_, s);
      Tensor dzh = reset_after_ ? Tensor() : at(dzh_, s);
      kernels::gru_step_backward(ex_, reset_after_, t_x(s), s, dseq(dy), gates, h_prev, dh_, dzx_,
                                 dzr, reset_after_ ? nullptr : &dzh);
      // Before the reset, r's gradient blocks are written at every step
      // (zero at the first, where h_0 = 0).
      if (!reset_after_) {
        kernels::matmul(ex_, false, true, batch_, units_, width(), 1.0f, dzh, recurrent_kernel(),
                        0.0f, drh_);
        kernels::gru_reset_backward(ex_, t_x(s), gates, h_prev, drh_, dh_, dzx_, dzr);
      }
      if (s == 0 && !initial_state()) continue;  // h_0 is the constant zero state
      kernels::matmul(ex_, false, true, batch_, units_, width(), 1.0f, dzr, recurrent_kernel(),
                      1.0f, dh_);
    }
    Tensor& dr = recurrent_kernel_grad();
    const int64_t rows = steps_ * batch_;
    kernels::matmul(ex_, true, false, units_, width(), rows, 1.0f, hs_, dz_, 0.0f, dr);
    if (!reset_after_)
      kernels::matmul(ex_, true, false, units_, width(), rows, 1.0f, rhs_, dzh_, 1.0f, dr);
    Tensor* db = bias_grad();
    if (db && reset_after_) {
      Tensor db_in = db->rows(0, 1), db_rec = db->rows(1, 2);
      kernels::column_sums(ex_, dz_, db_rec);
      end_backward(*in[0], need_dx[0], &db_in);
    } else {
      end_backward(*in[0], need_dx[0], db);
    }
  }

  json config() const override {
    json c = Recurrent::config();
    c["reset_after"] = reset_after_;
    return c;
  }

 private:
  Shape bias_shape() const override { return reset_after_ ? Shape{2, width()} : Shape{width()}; }

  bool reset_after_ = true;
  Tensor gates_acts_;  // (T, B, 4U): each step's z, r, hh and hh's recurrent part
  Tensor rhs_;         // before the reset: (T, B, U), each step's r h_prev
  Tensor hr2_;         // before the reset: (B, 3U), the step's (r h_prev) R
  Tensor dzh_;         // before the reset: (T, B, 3U), [0, 0, d(hh's recurrent part)]
  Tensor drh_;         // before the reset: (B, U), the gradient at r h_prev
};

}  // namespace

const LayerInfo& gru_layer() {
  static const LayerInfo info{
      .about = {.names = {"GRU"},
                .doc = "gated recurrent unit over (batch, time, features): Keras' cell",
                .schema = recurrent_schema(
                    true, {{"reset_after", OptionType::boolean, true,
                            "apply the reset gate after the recurrent GEMM (Keras 3) or before "
                            "it (Keras 2's default)"}}),
                .positional = {"units"}},
      .make = [](Options& o, const std::string& name) { return std::make_unique<Gru>(o, name); },
      .from_keras = recurrent_from_keras};
  return info;
}

}  // namespace drun::nn

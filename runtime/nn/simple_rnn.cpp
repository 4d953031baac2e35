// SimpleRNN, Keras' cell: h = activation(x W + h_prev R + b), kernel (F, U),
// recurrent_kernel (U, U), bias (U). The time loop is nn/recurrent.hpp's; the
// step is kernels' simple_rnn_step_forward/backward, which take any
// elementwise activation whose backward reads only its output.
#include "kernels/recurrent.hpp"
#include "nn/recurrent.hpp"

namespace drun::nn {

namespace {

class SimpleRnn final : public Recurrent {
 public:
  SimpleRnn(Options& o, const std::string& name) : Recurrent(o, "SimpleRNN", name, 1, false) {
    if (!kernels::simple_rnn_activation_ok(act_))
      throw UsageError(who() + ": activation '" + activation_name(act_.kind) +
                       "' is not supported: the fused step takes elementwise activations whose "
                       "gradient comes from their output (tanh, relu, sigmoid, linear...)");
  }
  const char* kind() const override { return "SimpleRNN"; }

  void forward(std::span<const Tensor* const> in, bool) override {
    begin_forward(in, bias());
    for (int64_t s = 0; s < steps_; ++s) {
      Tensor h = at(hs_, s + 1);
      kernels::matmul(ex_, false, false, batch_, units_, units_, 1.0f, at(hs_, s),
                      recurrent_kernel(), 0.0f, hr_);
      kernels::simple_rnn_step_forward(ex_, act_, t_x(s), s, xp_, hr_, h, seq());
    }
    end_forward();
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    begin_backward(dy);
    for (int64_t s = steps_ - 1; s >= 0; --s) {
      Tensor dz = at(dz_, s);
      kernels::simple_rnn_step_backward(ex_, act_, t_x(s), s, dseq(dy), at(hs_, s + 1), dh_, dz,
                                        dzx_);
      if (s > 0 || initial_state())  // else h_0 is the constant zero state
        kernels::matmul(ex_, false, true, batch_, units_, units_, 1.0f, dz, recurrent_kernel(),
                        0.0f, dh_);
    }
    kernels::matmul(ex_, true, false, units_, units_, steps_ * batch_, 1.0f, hs_, dz_, 0.0f,
                    recurrent_kernel_grad());
    end_backward(*in[0], need_dx[0], bias_grad());
  }
};

}  // namespace

const LayerInfo& simple_rnn_layer() {
  static const LayerInfo info{
      .about = {.names = {"SimpleRNN"},
                .doc = "a fully connected recurrent layer over (batch, time, features)",
                .schema = recurrent_schema(false, {}),
                .positional = {"units", "activation"}},
      .make = [](Options& o,
                 const std::string& name) { return std::make_unique<SimpleRnn>(o, name); },
      .from_keras = recurrent_from_keras};
  return info;
}

}  // namespace drun::nn

// What SimpleRNN, LSTM and GRU share (nn/simple_rnn.cpp, nn/lstm.cpp,
// nn/gru.cpp): Keras' options, the weights, and the work around the time
// loop. Input (batch, time, features). Forward projects every step's input
// in one GEMM, xp = x W + b (B T rows, batch-major, kept as is), then runs
// per step one GEMM h_{t-1} R and the cell's fused step op
// (kernels/recurrent.hpp), which reads the step's rows of xp in place.
// Backward runs the step ops back through time, each followed by the GEMM
// d(h_{t-1}); then one GEMM each for d(recurrent_kernel), d(kernel) and
// d(input), and column sums for d(bias). The GRU's and SimpleRNN's steps
// write their gradient at xp in xp's layout (dzx); the LSTM's gradient at xp
// is its gradient at h_{t-1} R (dz, time-major), which it keeps alone and
// takes d(kernel) and d(input) from, with x in processing order (xs_): the
// steps then write half as much (the LSTM LM's step 1.03-1.06x, Zen 4).
//
// States are kept time-major by processing step: hs (T + 1, B, U) with
// hs[0] = 0, so that step s's GEMM reads hs[s] and d(recurrent_kernel) is one
// GEMM over all steps. With go_backwards step s reads input time T - 1 - s
// and, as Keras, the returned sequence is in processing order.
//
// return_state adds the final states as outputs, as Keras returns them:
// [output, h] (LSTM: [output, h, c]), views of the last step's; gradients
// arriving at them start the recurrence's. Inputs after the first are the
// initial states (Keras' call keyword initial_state), which hs[0] (and the
// LSTM's cs[0]) then copy, and whose gradients the steps carry back to them.
#pragma once
#include <string>

#include "nn/layers.hpp"

namespace drun::nn {

class Recurrent : public Layer {
 public:
  // `cls`: the Keras class (kind()); `gates`: G, the kernel's column blocks (1, 3 or 4).
  Recurrent(Options& o, const char* cls, const std::string& name, int gates,
            bool has_recurrent_activation);

  int num_inputs() const override { return 0; }  // the sequence, then any initial states
  Shape build(std::span<const Shape> inputs, Rng& rng) override;
  json config() const override;
  int num_outputs() const override { return return_state_ ? 1 + num_states() : 1; }
  void set_extra_output_grads(std::span<const Tensor* const> grads) override {
    dstate_.assign(grads.begin(), grads.end());
  }
  const char* keras_inputs_keyword() const override { return "initial_state"; }
  // The states the cell carries: h (LSTM: h and c).
  virtual int num_states() const { return 1; }

 protected:
  // The bias' shape (G U; GRU's reset_after (2, 3U)) and its initial values
  // after bias_initializer (LSTM's unit_forget_bias).
  virtual Shape bias_shape() const { return Shape{gates_ * units_}; }
  virtual void init_bias(Tensor&) const {}

  const Tensor& extra_output(int k) const override {
    return state_out_[static_cast<size_t>(k - 1)];
  }
  Shape extra_output_shape(int) const override { return Shape{units_}; }

  // Sizes the buffers for x = in[0] (B, T, F) and sets xp = x W (+ `bias`
  // where given, G U values) and hs[0], the initial state in[1] or zeros.
  void begin_forward(std::span<const Tensor* const> in, const Tensor* bias);
  // The output: the sequence (out_, written by the steps) or hs[T]; and
  // with return_state, the final states, hs[T] and `cell` (LSTM's c) where given.
  void end_forward(const Tensor* cell = nullptr);
  // The gradient the steps add at t_y: the sequence's, or none (null) where
  // only the last state is returned.
  const Tensor* dseq(const Tensor& dy) const { return return_sequences_ ? &dy : nullptr; }
  // Sizes the gradient buffers (dzx_ where `with_dzx`); dh starts at zero, or
  // at dy where only the last state is returned, plus the gradient at the
  // returned h_T.
  void begin_backward(const Tensor& dy, bool with_dzx = true);
  // The gradient arriving at returned state k (LSTM's c: 1), or null.
  const Tensor* dstate(int k) const {
    return static_cast<size_t>(k) < dstate_.size() ? dstate_[static_cast<size_t>(k)] : nullptr;
  }
  // d(kernel) and d(input) from dzx_, d(bias) (G U values) where given; and
  // with initial states, d(h_0), which dh_ holds after the first step's GEMM.
  void end_backward(const Tensor& x, bool need_dx, Tensor* dbias);
  // The same from dz (T, B, G U), the gradient at xp in processing order.
  void end_backward_by_steps(const Tensor& x, const Tensor& dz, bool need_dx, Tensor* dbias);
  // Whether the first step's h_{t-1} is an input (else the constant zero
  // state, whose gradient is not computed).
  bool initial_state() const { return initial_state_; }

  // Step s's (B, width) slice of a time-major (T', B, width) buffer.
  Tensor at(const Tensor& t, int64_t s) const {
    return t.rows(s, s + 1).reshaped(Shape{batch_, t.dim(2)});
  }
  int64_t t_x(int64_t s) const { return go_backwards_ ? steps_ - 1 - s : s; }
  Tensor* seq() { return return_sequences_ ? &out_ : nullptr; }
  Tensor& kernel() { return params_[0].value; }
  Tensor& recurrent_kernel() { return params_[1].value; }
  Tensor& recurrent_kernel_grad() { return params_[1].grad; }
  const Tensor* bias() const { return use_bias_ ? &params_[2].value : nullptr; }
  Tensor* bias_grad() { return use_bias_ ? &params_[2].grad : nullptr; }
  int64_t width() const { return gates_ * units_; }  // G U
  std::string cell_name() const;                     // "lstm_cell": Keras' weight path

  int64_t units_ = 0, gates_ = 0, in_ = 0;
  int64_t batch_ = 0, steps_ = 0;  // of the last forward
  kernels::ActivationFn act_;      // the cell's activation ("tanh")
  bool use_bias_ = true, return_sequences_ = false, go_backwards_ = false, unroll_ = false;
  bool return_state_ = false, initial_state_ = false;
  bool has_recurrent_activation_;
  std::string kernel_init_, recurrent_init_, bias_init_;
  Tensor xp_;                          // (B, T, G U): x W + b
  Tensor hs_;                          // (T + 1, B, U): the states
  Tensor hr_;                          // (B, G U): the step's h_{t-1} R
  Tensor dh_;                          // (B, U): the gradient at the state
  Tensor dzx_;                         // (B, T, G U): the gradient at xp
  Tensor dz_;                          // (T, B, G U): the gradient at each step's h_{t-1} R
  Tensor kernel_t_;                    // (G U, F): the kernel transposed, for d(input)
  Tensor xs_;                          // (T, B, F): x, then d(input), in processing order
  std::vector<Tensor> state_out_;      // return_state: views of the final states
  std::vector<const Tensor*> dstate_;  // return_state: the gradients at them (null: none)
};

// The options every recurrent layer takes, in Keras' names and defaults;
// `recurrent_activation` where the cell has gates.
Schema recurrent_schema(bool gated, std::initializer_list<Schema::Entry> more);
// Keras 2 keys that change nothing here (implementation, time_major false).
void recurrent_from_keras(json& config, const std::string& who);

}  // namespace drun::nn

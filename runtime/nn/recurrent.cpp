#include "nn/recurrent.hpp"

#include "nn/affine.hpp"
#include "nn/copy_views.hpp"
#include "nn/init.hpp"

namespace drun::nn {

Recurrent::Recurrent(Options& o, const char* cls, const std::string& name, int gates,
                     bool has_recurrent_activation)
    : Layer(name), gates_(gates), has_recurrent_activation_(has_recurrent_activation) {
  // Not who(): it asks kind(), which the derived class answers only once constructed.
  const std::string who = std::string(cls) + " '" + name + "'";
  units_ = o.get<int64_t>("units");
  if (units_ <= 0)
    throw UsageError(who + ": units must be positive, got " + std::to_string(units_));
  act_ = parse_activation(o.get<std::string>("activation"), who);
  // The gated cells' fused steps apply Keras' defaults, tanh and sigmoid.
  if (has_recurrent_activation_) {
    if (act_.kind != kernels::Activation::tanh)
      throw UsageError(who + ": activation '" + o.get<std::string>("activation") +
                       "' is not supported; drun's fused cell takes 'tanh'");
    const std::string rec = o.get<std::string>("recurrent_activation");
    if (parse_activation(rec, who) != kernels::Activation::sigmoid)
      throw UsageError(who + ": recurrent_activation '" + rec +
                       "' is not supported; drun's fused cell takes 'sigmoid'");
  }
  use_bias_ = o.get<bool>("use_bias");
  kernel_init_ = o.get<std::string>("kernel_initializer");
  recurrent_init_ = o.get<std::string>("recurrent_initializer");
  bias_init_ = o.get<std::string>("bias_initializer");
  return_sequences_ = o.get<bool>("return_sequences");
  go_backwards_ = o.get<bool>("go_backwards");
  unroll_ = o.get<bool>("unroll");  // the loop runs step by step either way
  return_state_ = o.get<bool>("return_state");
  if (o.get<bool>("stateful"))
    throw UsageError(who +
                     ": stateful = true is not supported; each batch starts from zero states");
  for (const char* key : {"dropout", "recurrent_dropout"}) {
    const double rate = o.get<double>(key);
    if (rate != 0.0)
      throw UsageError(who + ": " + key + " = " + json(rate).dump() +
                       " is not supported (0 only); put a Dropout layer before or after it");
  }
  (void)o.get<bool>("zero_output_for_mask");  // no masks in drun: nothing to zero
}

std::string Recurrent::cell_name() const {
  std::string k = keras_base_name(kind());
  return k + "_cell";
}

Shape Recurrent::build(std::span<const Shape> in, Rng& rng) {
  if (in[0].rank() != 2)
    throw UsageError(who() + ": expects sequences (batch, time, features), got " +
                     in[0].with_batch(0).str(true));
  steps_ = in[0][0];
  in_ = in[0][1];
  const auto states = static_cast<size_t>(num_states());
  if (in.size() != 1 && in.size() != 1 + states)
    throw UsageError(who() + ": takes the sequence and " + std::to_string(states) +
                     " initial state(s), got " + std::to_string(in.size() - 1) + " state(s)");
  for (size_t k = 1; k < in.size(); ++k)
    if (in[k] != Shape{units_})
      throw UsageError(who() + ": initial state " + std::to_string(k - 1) + " has shape " +
                       in[k].with_batch(0).str(true) + ", not (None, " + std::to_string(units_) +
                       ")");
  initial_state_ = in.size() > 1;
  dx_.resize(in.size());
  state_out_.resize(return_state_ ? states : 0);
  const std::string cell = cell_name() + "/";
  Param& w = add_param(cell + "kernel", Shape{in_, width()});
  initialize(w.value, kernel_init_, in_, width(), rng, who());
  Param& r = add_param(cell + "recurrent_kernel", Shape{units_, width()});
  initialize(r.value, recurrent_init_, units_, width(), rng, who());
  if (use_bias_) {
    Param& b = add_param(cell + "bias", bias_shape());
    initialize(b.value, bias_init_, in_, width(), rng, who());
    init_bias(b.value);
  }
  return output_shape_ = return_sequences_ ? Shape{steps_, units_} : Shape{units_};
}

void Recurrent::begin_forward(std::span<const Tensor* const> in, const Tensor* b) {
  const Tensor& x = *in[0];
  if (in.size() != dx_.size())
    throw UsageError(who() + ": was built with " + std::to_string(dx_.size() - 1) +
                     " initial state(s), given " + std::to_string(in.size() - 1));
  if (x.rank() != 3 || x.dim(2) != in_)
    throw UsageError(who() + ": expects input (batch, time, " + std::to_string(in_) + "), got " +
                     x.shape().str());
  batch_ = x.dim(0);
  steps_ = x.dim(1);
  if (steps_ < 1) throw UsageError(who() + ": a sequence needs at least one step");
  ensure(xp_, Shape{batch_, steps_, width()});
  ensure(hs_, Shape{steps_ + 1, batch_, units_});
  ensure(hr_, Shape{batch_, width()});
  affine_forward(ex_, batch_ * steps_, in_, width(), x, kernel(), b, xp_);
  Tensor h0 = at(hs_, 0);
  for (size_t k = 1; k < in.size(); ++k)
    if (in[k]->shape() != h0.shape())
      throw UsageError(who() + ": initial state " + std::to_string(k - 1) + " has shape " +
                       in[k]->shape().str() + ", not " + h0.shape().str());
  if (initial_state_) {
    kernels::cast(ex_, *in[1], h0);  // a copy
  } else {
    kernels::fill(ex_, 0.0f, h0);
  }
  if (return_sequences_) ensure(out_, Shape{batch_, steps_, units_});
}

void Recurrent::end_forward(const Tensor* cell) {
  // The last state is the output as it stands: a view, no copy.
  if (!return_sequences_) out_ = at(hs_, steps_);
  if (!return_state_) return;
  state_out_[0] = at(hs_, steps_);
  if (cell) state_out_[1] = at(*cell, steps_);
}

void Recurrent::begin_backward(const Tensor& dy, bool with_dzx) {
  ensure(dh_, Shape{batch_, units_});
  if (with_dzx) ensure(dzx_, Shape{batch_, steps_, width()});
  ensure(dz_, Shape{steps_, batch_, width()});
  const Tensor* dh_last = dstate(0);
  if (!return_sequences_) {
    kernels::cast(ex_, dy, dh_);  // a copy: the steps update dh in place
    if (dh_last) kernels::axpy(ex_, 1.0f, *dh_last, dh_);
  } else if (dh_last) {
    kernels::cast(ex_, *dh_last, dh_);
  } else {
    kernels::fill(ex_, 0.0f, dh_);
  }
}

void Recurrent::end_backward(const Tensor& x, bool need_dx, Tensor* dbias) {
  const int64_t rows = batch_ * steps_;
  kernels::matmul(ex_, true, false, in_, width(), rows, 1.0f, x, dzx_, 0.0f, params_[0].grad);
  if (dbias) kernels::column_sums(ex_, dzx_, *dbias);
  if (need_dx) {
    ensure(dx_[0], x.shape());
    kernels::matmul(ex_, false, true, rows, in_, width(), 1.0f, dzx_, kernel(), 0.0f, dx_[0]);
  }
  if (initial_state_) dx_[1] = dh_;  // a view: dh_ is not written again before the next backward
}

// x (B, T, F) <-> (T, B, F) in processing order: step s is time t_x(s), the
// steps walked backwards with go_backwards. `to_steps`: from x's layout.
static kernels::CopyGeometry steps_geometry(int64_t b, int64_t t, int64_t f, bool backwards,
                                            bool to_steps) {
  const Strides by_step{b * f, f, 1}, by_example{backwards ? -f : f, t * f, 1};
  const int64_t start = backwards ? (t - 1) * f : 0;
  return to_steps ? copy_geometry(Shape{t, b, f}, by_example, by_step, start, 0)
                  : copy_geometry(Shape{t, b, f}, by_step, by_example, 0, start);
}

void Recurrent::end_backward_by_steps(const Tensor& x, const Tensor& dz, bool need_dx,
                                      Tensor* dbias) {
  const int64_t rows = batch_ * steps_;
  ensure(xs_, Shape{steps_, batch_, in_});
  kernels::strided_copy(ex_, steps_geometry(batch_, steps_, in_, go_backwards_, true), x, 0.0f,
                        xs_);
  kernels::matmul(ex_, true, false, in_, width(), rows, 1.0f, xs_, dz, 0.0f, params_[0].grad);
  if (dbias) kernels::column_sums(ex_, dz, *dbias);
  if (need_dx) {
    ensure(dx_[0], x.shape());
    // dz W^T against W^T's copy: nn, which the CPU's own GEMM computes
    // (2,048 x 64, K 1,024 on a Zen 4 core: 2.60 ms against OpenBLAS' nt 3.07).
    ensure(kernel_t_, Shape{width(), in_});
    kernels::strided_copy(ex_, transpose_geometry(in_, width()), kernel(), 0.0f, kernel_t_);
    kernels::matmul(ex_, false, false, rows, in_, width(), 1.0f, dz, kernel_t_, 0.0f, xs_);
    kernels::strided_copy(ex_, steps_geometry(batch_, steps_, in_, go_backwards_, false), xs_, 0.0f,
                          dx_[0]);
  }
  if (initial_state_) dx_[1] = dh_;  // a view: dh_ is not written again before the next backward
}

json Recurrent::config() const {
  json c = Layer::config();
  c["units"] = units_;
  c["activation"] = activation_name(act_.kind);
  if (has_recurrent_activation_) c["recurrent_activation"] = "sigmoid";
  c["use_bias"] = use_bias_;
  c["return_sequences"] = return_sequences_;
  c["return_state"] = return_state_;
  c["go_backwards"] = go_backwards_;
  c["stateful"] = false;
  c["unroll"] = unroll_;
  c["dropout"] = 0.0;
  c["recurrent_dropout"] = 0.0;
  c["kernel_initializer"] = {{"class_name", "GlorotUniform"}, {"config", {{"seed", nullptr}}}};
  c["recurrent_initializer"] = {{"class_name", "Orthogonal"},
                                {"config", {{"seed", nullptr}, {"gain", 1.0}}}};
  c["bias_initializer"] = {{"class_name", "Zeros"}, {"config", json::object()}};
  return c;
}

Schema recurrent_schema(bool gated, std::initializer_list<Schema::Entry> more) {
  Schema s{{"units", OptionType::integer, kRequired, "the state's size"},
           {"activation", OptionType::string, "tanh", "the cell's activation"}};
  if (gated)
    s = s.with({{"recurrent_activation", OptionType::string, "sigmoid",
                 "the gates' activation (only 'sigmoid')"}});
  return s
      .with({{"use_bias", OptionType::boolean, true, "whether to add the biases"},
             {"kernel_initializer", OptionType::string, "glorot_uniform",
              "the input kernel's initial values"},
             {"recurrent_initializer", OptionType::string, "orthogonal",
              "the recurrent kernel's initial values"},
             {"bias_initializer", OptionType::string, "zeros", "the bias' initial values"},
             {"return_sequences", OptionType::boolean, false,
              "return every step's output (batch, time, units), not only the last"},
             {"return_state", OptionType::boolean, false,
              "also return the final states: output, h (LSTM: output, h, c)"},
             {"go_backwards", OptionType::boolean, false,
              "run the sequence backwards (returning it in that order)"},
             {"stateful", OptionType::boolean, false, "only false: each batch starts at zero"},
             {"unroll", OptionType::boolean, false, "accepted; the loop is not unrolled"},
             {"dropout", OptionType::number, 0.0, "only 0"},
             {"recurrent_dropout", OptionType::number, 0.0, "only 0"},
             {"zero_output_for_mask", OptionType::boolean, false, "accepted; drun has no masks"}})
      .with(Schema(more));
}

void recurrent_from_keras(json& config, const std::string& who) {
  // Keras 2: the cell's implementation (1 or 2) computes the same function.
  config.erase("implementation");
  if (config.contains("time_major")) {
    if (config["time_major"] != false)
      throw UsageError(who + ": time_major = true is not supported (batch, time, features only)");
    config.erase("time_major");
  }
}

}  // namespace drun::nn

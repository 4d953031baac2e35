// Dense: y = act(x W + b) with x (N, F), W (F, units) as Keras stores it; over
// the last axis of a (N, ..., F) input, as Keras: its rows are the GEMM's.
// The activation runs in place on x W + b unless its backward needs that
// pre-activation (swish, gelu), which is then kept in a buffer of its own.
#include "nn/affine.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

class Dense final : public Layer {
 public:
  Dense(Options& o, const std::string& name) : Layer(name) {
    units_ = o.get<int64_t>("units");
    if (units_ <= 0) throw UsageError(who() + ": units must be positive");
    act_ = parse_activation(o.get<std::string>("activation"), who());
    use_bias_ = o.get<bool>("use_bias");
    kernel_init_ = o.get<std::string>("kernel_initializer");
    bias_init_ = o.get<std::string>("bias_initializer");
  }
  const char* kind() const override { return "Dense"; }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    if (in[0].rank() < 1)
      throw UsageError(who() + ": expects input (batch, ..., features), got " +
                       in[0].with_batch(0).str(true));
    in_ = in[0][-1];
    Param& w = add_param("kernel", Shape{in_, units_});
    initialize(w.value, kernel_init_, in_, units_, rng, who());
    if (use_bias_) {
      Param& b = add_param("bias", Shape{units_});
      initialize(b.value, bias_init_, in_, units_, rng, who());
    }
    Shape out = in[0];
    out[-1] = units_;
    return output_shape_ = out;
  }

  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    const int64_t n = x.numel() / in_;
    ensure(out_, output_shape_.with_batch(x.dim(0)));
    Tensor& z = act_.reads_input() ? z_ : out_;
    if (act_.reads_input()) ensure(z_, out_.shape());
    const Tensor& xc = in_compute_type(x, x_narrow_);
    const Tensor& kernel = in_compute_type(params_[0].value, kernel_narrow_);
    affine_forward(ex_, n, in_, units_, xc, kernel, use_bias_ ? &params_[1].value : nullptr, z);
    kernels::activation_forward(ex_, act_, z, out_);
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    const Tensor& x = *in[0];
    const int64_t n = x.numel() / in_;
    const Tensor* dz = &dy;
    if (act_.kind != kernels::Activation::linear) {
      ensure(dz_, out_.shape());
      kernels::activation_backward(ex_, act_, z_, out_, dy, dz_);
      dz = &dz_;
    }
    // The operands of this step's forward: in the compute type, rounded there.
    const bool narrow = compute_ != DType::f32;
    kernels::matmul(ex_, true, false, in_, units_, n, 1.0f, narrow ? x_narrow_ : x, *dz, 0.0f,
                    params_[0].grad);
    if (use_bias_) kernels::column_sums(ex_, *dz, params_[1].grad);
    if (need_dx[0]) {
      ensure(dx_[0], x.shape());
      kernels::matmul(ex_, false, true, n, in_, units_, 1.0f, *dz,
                      narrow ? kernel_narrow_ : params_[0].value, 0.0f, dx_[0]);
    }
  }

  json config() const override {
    json c = Layer::config();
    c["units"] = units_;
    c["activation"] = activation_name(act_.kind);
    c["use_bias"] = use_bias_;
    c["kernel_initializer"] = {{"class_name", "GlorotUniform"}, {"config", {{"seed", nullptr}}}};
    c["bias_initializer"] = {{"class_name", "Zeros"}, {"config", json::object()}};
    return c;
  }

 private:
  int64_t units_ = 0, in_ = 0;
  kernels::ActivationFn act_;
  bool use_bias_ = true;
  std::string kernel_init_, bias_init_;
  Tensor z_;  // the pre-activation, where the activation's backward reads it
  Tensor dz_;
  Tensor x_narrow_, kernel_narrow_;  // the step's operands in a narrower compute type
};

}  // namespace

const LayerInfo& dense_layer() {
  static const LayerInfo info{
      .about = {.names = {"Dense"},
                .doc = "a fully connected layer: activation(x W + b) over the last axis",
                .schema = {{"units", OptionType::integer, kRequired, "output features"},
                           {"activation", OptionType::string, "linear", "applied to x W + b"},
                           {"use_bias", OptionType::boolean, true, "whether to add b"},
                           {"kernel_initializer", OptionType::string, "glorot_uniform",
                            "W's initial values"},
                           {"bias_initializer", OptionType::string, "zeros", "b's initial values"}},
                .positional = {"units", "activation"}},
      .make = [](Options& o, const std::string& name) { return std::make_unique<Dense>(o, name); }};
  return info;
}

}  // namespace drun::nn

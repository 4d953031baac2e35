// DepthwiseConv2D and SeparableConv2D on NHWC inputs. Each input channel is
// convolved with its own depth_multiplier filters (the kernels' depthwise
// ops); SeparableConv2D then mixes the channels with a 1x1 convolution, which
// on NHWC activations is one GEMM over the batch's pixels, and adds its bias
// after it. Activations as in Conv2D: in place on the output, unless their
// backward reads the pre-activation, which is then kept. Both compute in
// float32 whatever the mixed precision policy: the depthwise part does a few
// multiply-adds per value, which no tensor core speeds up.
#include <tuple>

#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

class DepthwiseConv2D final : public Layer {
 public:
  // separable: a SeparableConv2D, with `filters` and a pointwise kernel.
  DepthwiseConv2D(Options& o, const std::string& name, bool separable)
      : Layer(name), separable_(separable) {
    if (separable_) {
      filters_ = o.get<int64_t>("filters");
      pointwise_init_ = o.get<std::string>("pointwise_initializer");
    }
    std::tie(kh_, kw_) = read_pair(o, "kernel_size", {0, 0});
    std::tie(sh_, sw_) = read_pair(o, "strides", {1, 1});
    same_ = read_padding(o);
    require_channels_last(o);
    const auto dilation = read_pair(o, "dilation_rate", {1, 1});
    if (dilation != std::pair<int64_t, int64_t>{1, 1})
      throw UsageError(who() + ": only dilation_rate 1 is supported, got " +
                       o.value("dilation_rate").dump());
    multiplier_ = o.get<int64_t>("depth_multiplier");
    act_ = parse_activation(o.get<std::string>("activation"), who());
    use_bias_ = o.get<bool>("use_bias");
    depthwise_init_ = o.get<std::string>("depthwise_initializer");
    bias_init_ = o.get<std::string>("bias_initializer");
    if (kh_ <= 0 || kw_ <= 0) throw UsageError(who() + ": kernel_size is required and positive");
    if (sh_ <= 0 || sw_ <= 0)
      throw UsageError(who() + ": strides must be positive, got " + std::to_string(sh_) + "x" +
                       std::to_string(sw_));
    if (multiplier_ <= 0)
      throw UsageError(who() + ": depth_multiplier must be positive, got " +
                       std::to_string(multiplier_));
    if (separable_ && filters_ <= 0)
      throw UsageError(who() + ": filters must be positive, got " + std::to_string(filters_));
  }
  const char* kind() const override { return separable_ ? "SeparableConv2D" : "DepthwiseConv2D"; }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    const Spatial s = expect_spatial(in[0], false);
    h_ = s.h;
    w_ = s.w;
    c_ = s.c;
    const auto g = geometry(1);
    if (g.oh <= 0 || g.ow <= 0)
      throw UsageError(who() + ": kernel " + std::to_string(kh_) + "x" + std::to_string(kw_) +
                       " does not fit input " + in[0].with_batch(0).str(true));
    // Keras' names, shapes and order: (depthwise_)kernel, pointwise_kernel, bias.
    Param& k =
        add_param(separable_ ? "depthwise_kernel" : "kernel", Shape{kh_, kw_, c_, multiplier_});
    initialize(k.value, depthwise_init_, kh_ * kw_ * c_, kh_ * kw_ * multiplier_, rng, who());
    if (separable_) {
      Param& p = add_param("pointwise_kernel", Shape{1, 1, g.co, filters_});
      initialize(p.value, pointwise_init_, g.co, filters_, rng, who());
    }
    if (use_bias_) {
      Param& b = add_param("bias", Shape{out_channels()});
      initialize(b.value, bias_init_, 0, 0, rng, who());
    }
    return output_shape_ = Shape{g.oh, g.ow, out_channels()};
  }

  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    const auto g = geometry(x.dim(0));
    ensure(out_, output_shape_.with_batch(g.n));
    Tensor& z = act_.reads_input() ? z_ : out_;
    if (act_.reads_input()) ensure(z_, out_.shape());
    if (!separable_) {
      kernels::depthwise_conv2d_forward(ex_, g, x, params_[0].value, bias(), z);
    } else {
      ensure(depthwise_out_, Shape{g.n, g.oh, g.ow, g.co});
      kernels::depthwise_conv2d_forward(ex_, g, x, params_[0].value, Tensor(), depthwise_out_);
      kernels::matmul(ex_, false, false, pixels(g), filters_, g.co, 1.0f, depthwise_out_,
                      params_[1].value, 0.0f, z);
      if (use_bias_) kernels::bias_add(ex_, z, bias());
    }
    if (act_.kind != kernels::Activation::linear) kernels::activation_forward(ex_, act_, z, out_);
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    const Tensor& x = *in[0];
    const auto g = geometry(x.dim(0));
    const Tensor* dz = &dy;
    if (act_.kind != kernels::Activation::linear) {
      ensure(dz_, out_.shape());
      kernels::activation_backward(ex_, act_, z_, out_, dy, dz_);
      dz = &dz_;
    }
    if (use_bias_) kernels::column_sums(ex_, *dz, params_.back().grad);
    // The gradient at the depthwise part's output: dz itself, or through
    // the pointwise GEMM.
    const Tensor* dd = dz;
    if (separable_) {
      kernels::matmul(ex_, true, false, g.co, filters_, pixels(g), 1.0f, depthwise_out_, *dz, 0.0f,
                      params_[1].grad);
      ensure(dd_, depthwise_out_.shape());
      kernels::matmul(ex_, false, true, pixels(g), g.co, filters_, 1.0f, *dz, params_[1].value,
                      0.0f, dd_);
      dd = &dd_;
    }
    kernels::depthwise_conv2d_backward_filter(ex_, g, x, *dd, params_[0].grad);
    if (need_dx[0]) {
      ensure(dx_[0], x.shape());
      kernels::depthwise_conv2d_backward_data(ex_, g, *dd, params_[0].value, dx_[0]);
    }
  }

  json config() const override {
    json c = Layer::config();
    if (separable_) c["filters"] = filters_;
    c["kernel_size"] = {kh_, kw_};
    c["strides"] = {sh_, sw_};
    c["padding"] = same_ ? "same" : "valid";
    c["depth_multiplier"] = multiplier_;
    c["data_format"] = "channels_last";
    c["dilation_rate"] = {1, 1};
    c["activation"] = activation_name(act_.kind);
    c["use_bias"] = use_bias_;
    return c;
  }

 private:
  kernels::ConvGeometry geometry(int64_t n) const {
    return kernels::conv_geometry(n, h_, w_, c_, kh_, kw_, c_ * multiplier_, sh_, sw_, same_);
  }
  static int64_t pixels(const kernels::ConvGeometry& g) { return g.n * g.oh * g.ow; }
  int64_t out_channels() const { return separable_ ? filters_ : c_ * multiplier_; }
  // The bias, or an undefined tensor (the ops add none).
  const Tensor& bias() const { return use_bias_ ? params_.back().value : no_bias_; }

  bool separable_, same_ = false, use_bias_ = true;
  int64_t filters_ = 0, kh_ = 0, kw_ = 0, sh_ = 1, sw_ = 1, multiplier_ = 1;
  int64_t h_ = 0, w_ = 0, c_ = 0;
  kernels::ActivationFn act_;
  std::string depthwise_init_, pointwise_init_, bias_init_;
  Tensor z_;              // the pre-activation, where the activation's backward reads it
  Tensor dz_;             // the gradient there
  Tensor depthwise_out_;  // SeparableConv2D: the depthwise part's output, the GEMM's input
  Tensor dd_;             // and its gradient
  Tensor no_bias_;        // undefined
};

LayerInfo depthwise_layer(bool separable) {
  Schema::Entry common[] = {
      {"kernel_size", OptionType::pair, kRequired, "the window, k or {kh, kw}"},
      {"strides", OptionType::pair, 1, "the step, s or {sh, sw}"},
      padding_option(),
      {"depth_multiplier", OptionType::integer, 1, "filters per input channel"},
      data_format_option(),
      {"dilation_rate", OptionType::pair, 1, "only 1 (no dilation)"},
      {"activation", OptionType::string, "linear", "applied to the output"},
      {"use_bias", OptionType::boolean, true, "whether to add a bias"},
      {"depthwise_initializer", OptionType::string, "glorot_uniform",
       "the depthwise kernel's initial values"},
      {"bias_initializer", OptionType::string, "zeros", "the bias' initial values"}};
  Schema schema;
  if (separable)
    schema.options.push_back(
        Schema::Entry{"filters", OptionType::integer, kRequired, "output channels"}.spec);
  for (const Schema::Entry& e : common) schema.options.push_back(e.spec);
  if (separable)
    schema.options.push_back(Schema::Entry{"pointwise_initializer", OptionType::string,
                                           "glorot_uniform",
                                           "the pointwise (1x1) kernel's initial values"}
                                 .spec);
  return {
      .about = {.names = {separable ? "SeparableConv2D" : "DepthwiseConv2D"},
                .doc = separable ? "a depthwise convolution of NHWC images followed by a 1x1 "
                                   "convolution that mixes its channels"
                                 : "a convolution of each channel of NHWC images with its own "
                                   "filters",
                .schema = schema,
                // Keras' order of the leading parameters.
                .positional = separable ? std::vector<std::string>{"filters", "kernel_size",
                                                                   "strides", "padding"}
                                        : std::vector<std::string>{"kernel_size", "strides",
                                                                   "padding", "depth_multiplier"}},
      .make = [separable](Options& o, const std::string& layer_name) {
        return std::make_unique<DepthwiseConv2D>(o, layer_name, separable);
      }};
}

}  // namespace

const LayerInfo& depthwise_conv2d_layer() {
  static const LayerInfo info = depthwise_layer(false);
  return info;
}

const LayerInfo& separable_conv2d_layer() {
  static const LayerInfo info = depthwise_layer(true);
  return info;
}

}  // namespace drun::nn

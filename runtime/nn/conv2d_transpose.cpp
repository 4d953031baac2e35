// Conv2DTranspose on NHWC inputs, as Keras 3 defines it. A transposed
// convolution is the input gradient of a convolution that maps its output
// back to its input, so it runs on the convolution ops with the roles
// swapped: forward is conv2d_backward_data, the input gradient is
// conv2d_forward and the kernel gradient conv2d_backward_filter with the
// output's gradient as the "input" and the input as the "output gradient".
// Keras' kernel (kh, kw, filters, in_channels) is that convolution's HWIO
// kernel as it is, so files need no transposes.
#include <algorithm>
#include <optional>

#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

// Keras' deconv_output_length (keras/src/utils/conv_utils.py): without
// output_padding 'valid' covers every kernel tap and every stride step
// (in * s + max(k - s, 0)) and 'same' is in * s; with it, the length is
// (in - 1) * s + k less 'same''s k / 2 on each side, plus output_padding.
int64_t transposed_length(int64_t in, int64_t k, int64_t s, bool same,
                          std::optional<int64_t> output_padding) {
  if (!output_padding) return same ? in * s : in * s + std::max<int64_t>(k - s, 0);
  return (in - 1) * s + k - (same ? 2 * (k / 2) : 0) + *output_padding;
}

class Conv2DTranspose final : public Layer {
 public:
  Conv2DTranspose(Options& o, const std::string& name) : Layer(name) {
    filters_ = o.get<int64_t>("filters");
    auto [kh, kw] = read_pair(o, "kernel_size", {0, 0});
    kh_ = kh;
    kw_ = kw;
    auto [sh, sw] = read_pair(o, "strides", {1, 1});
    sh_ = sh;
    sw_ = sw;
    same_ = read_padding(o);
    require_channels_last(o);
    if (filters_ <= 0)
      throw UsageError(who() + ": filters must be positive, got " + std::to_string(filters_));
    if (kh_ <= 0 || kw_ <= 0)
      throw UsageError(who() + ": kernel_size is required and positive, got " +
                       o.value("kernel_size").dump());
    if (sh_ <= 0 || sw_ <= 0)
      throw UsageError(who() + ": strides must be positive, got " + o.value("strides").dump());
    auto [dh, dw] = read_pair(o, "dilation_rate", {1, 1});
    if (dh != 1 || dw != 1)
      throw UsageError(who() + ": only dilation_rate 1 is supported, got " +
                       o.value("dilation_rate").dump());
    if (!o.value("output_padding").is_null()) {
      auto [ph, pw] = read_pair(o, "output_padding", {0, 0});
      // Keras' own rule: a padding of a whole stride would be a row no
      // input pixel reaches, which a longer input gives instead.
      if (ph < 0 || pw < 0 || ph >= sh_ || pw >= sw_)
        throw UsageError(who() + ": output_padding must be at least 0 and less than the strides (" +
                         std::to_string(sh_) + ", " + std::to_string(sw_) + "), got " +
                         o.value("output_padding").dump());
      pad_h_ = ph;
      pad_w_ = pw;
    }
    act_ = parse_activation(o.get<std::string>("activation"), who());
    use_bias_ = o.get<bool>("use_bias");
    kernel_init_ = o.get<std::string>("kernel_initializer");
    bias_init_ = o.get<std::string>("bias_initializer");
  }
  const char* kind() const override { return "Conv2DTranspose"; }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    const Spatial s = expect_spatial(in[0], false);
    h_ = s.h;
    w_ = s.w;
    c_ = s.c;
    oh_ = transposed_length(h_, kh_, sh_, same_, pad_h_);
    ow_ = transposed_length(w_, kw_, sw_, same_, pad_w_);
    if (oh_ <= 0 || ow_ <= 0)
      throw UsageError(who() + ": input " + in[0].with_batch(0).str(true) + " gives an empty " +
                       std::to_string(oh_) + "x" + std::to_string(ow_) + " output");
    Param& k = add_param("kernel", Shape{kh_, kw_, filters_, c_});
    // Keras' fans of this shape: receptive field x filters in, x in_channels out.
    initialize(k.value, kernel_init_, kh_ * kw_ * filters_, kh_ * kw_ * c_, rng, who());
    if (use_bias_) {
      Param& b = add_param("bias", Shape{filters_});
      initialize(b.value, bias_init_, 0, 0, rng, who());
    }
    return output_shape_ = Shape{oh_, ow_, filters_};
  }

  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    const auto g = geometry(x.dim(0));
    ensure(out_, output_shape_.with_batch(g.n));
    Tensor& z = act_.reads_input() ? z_ : out_;
    if (act_.reads_input()) ensure(z_, out_.shape());
    ensure(workspace_, Shape{kernels::conv2d_workspace_floats(ex_, g)});
    const Tensor& xc = in_compute_type(x, x_narrow_);
    const Tensor& kernel = in_compute_type(params_[0].value, kernel_narrow_);
    kernels::conv2d_backward_data(ex_, g, xc, kernel, z, workspace_);
    if (use_bias_) kernels::bias_add(ex_, z, params_[1].value);
    kernels::activation_forward(ex_, act_, z, out_);
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    const Tensor& x = *in[0];
    const auto g = geometry(x.dim(0));
    const bool narrow = compute_ != DType::f32;
    const Tensor& xc = narrow ? x_narrow_ : x;
    const Tensor& kernel = narrow ? kernel_narrow_ : params_[0].value;
    const Tensor* dz = &dy;
    if (act_.kind != kernels::Activation::linear) {
      ensure(dz_, out_.shape());
      kernels::activation_backward(ex_, act_, z_, out_, dy, dz_);
      dz = &dz_;
    }
    if (use_bias_) kernels::column_sums(ex_, *dz, params_[1].grad);
    // The output's gradient is the swapped convolution's input: in the
    // compute type, as the forward's input was.
    const Tensor& dzc = in_compute_type(*dz, dz_narrow_);
    kernels::conv2d_backward_filter(ex_, g, dzc, xc, nullptr, params_[0].grad, no_bias_,
                                    workspace_);
    if (need_dx[0]) {
      ensure(dx_[0], x.shape());
      kernels::conv2d_forward(ex_, g, dzc, kernel, no_bias_, dx_[0], false, workspace_, nullptr);
    }
  }

  json config() const override {
    json c = Layer::config();
    c["filters"] = filters_;
    c["kernel_size"] = {kh_, kw_};
    c["strides"] = {sh_, sw_};
    c["padding"] = same_ ? "same" : "valid";
    c["output_padding"] = pad_h_ ? json{*pad_h_, *pad_w_} : json();
    c["data_format"] = "channels_last";
    c["dilation_rate"] = {1, 1};
    c["activation"] = activation_name(act_.kind);
    c["use_bias"] = use_bias_;
    return c;
  }

 private:
  // The convolution from this layer's output (oh_ x ow_ x filters) to its
  // input (h_ x w_ x c): TensorFlow's 'same' padding for those sizes, which
  // is what Keras' transposed padding comes to, and none for 'valid'. Rows
  // of the output no window reaches (output_padding, strides over the
  // kernel) are the bias alone, as in Keras.
  kernels::ConvGeometry geometry(int64_t n) const {
    kernels::ConvGeometry g{n, oh_, ow_, filters_, kh_, kw_, c_, sh_, sw_, 0, 0, h_, w_};
    g.pad_top = std::max<int64_t>(0, (h_ - 1) * sh_ + kh_ - oh_) / 2;
    g.pad_left = std::max<int64_t>(0, (w_ - 1) * sw_ + kw_ - ow_) / 2;
    return g;
  }

  int64_t filters_ = 0, kh_ = 0, kw_ = 0, sh_ = 1, sw_ = 1;
  int64_t h_ = 0, w_ = 0, c_ = 0, oh_ = 0, ow_ = 0;
  std::optional<int64_t> pad_h_, pad_w_;  // output_padding; none is Keras' None
  bool same_ = false, use_bias_ = true;
  kernels::ActivationFn act_;
  std::string kernel_init_, bias_init_;
  Tensor z_;  // the pre-activation, where the activation's backward reads it
  Tensor dz_, workspace_;
  Tensor no_bias_;  // undefined: the swapped convolution has no bias of its own
  Tensor x_narrow_, kernel_narrow_, dz_narrow_;  // operands in a narrower compute type
};

}  // namespace

const LayerInfo& conv2d_transpose_layer() {
  static const LayerInfo info{
      .about = {.names = {"Conv2DTranspose"},
                .doc = "a transposed 2-D convolution of NHWC images (Keras' kernel "
                       "(kh, kw, filters, in_channels))",
                .schema = {{"filters", OptionType::integer, kRequired, "output channels"},
                           {"kernel_size", OptionType::pair, kRequired,
                            "the window, k or {kh, kw}"},
                           {"strides", OptionType::pair, 1, "the step, s or {sh, sw}"},
                           padding_option(),
                           {"output_padding", OptionType::pair, nullptr,
                            "output length added along each axis, less than the strides "
                            "(none: Keras' default length)"},
                           data_format_option(),
                           {"dilation_rate", OptionType::pair, 1, "only 1"},
                           {"activation", OptionType::string, "linear", "applied to the output"},
                           {"use_bias", OptionType::boolean, true, "whether to add a bias"},
                           {"kernel_initializer", OptionType::string, "glorot_uniform",
                            "the kernel's initial values"},
                           {"bias_initializer", OptionType::string, "zeros",
                            "the bias' initial values"}},
                .positional = {"filters", "kernel_size", "strides", "padding"}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<Conv2DTranspose>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

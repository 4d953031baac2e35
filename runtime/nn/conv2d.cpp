// Conv2D on NHWC inputs with an HWIO kernel (Keras' layout), im2col + GEMM.
// ReLU is fused into the convolution; other activations run in place on its
// output, unless their backward needs the pre-activation (swish, gelu), which
// is then kept in a buffer of its own. Conv1D is the same layer over
// (batch, steps, channels) seen as images one row high: the kernels take the
// geometry, not the tensors' shapes, so no copy or view is needed.
#include <stdexcept>

#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

std::pair<int64_t, int64_t> read_pair(Options& o, const std::string& key,
                                      std::pair<int64_t, int64_t> fallback) {
  const json& v = o.value(key);
  if (v.is_null()) return fallback;
  if (v.is_number_integer()) return {v.get<int64_t>(), v.get<int64_t>()};
  if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer())
    return {v[0].get<int64_t>(), v[1].get<int64_t>()};
  throw UsageError(o.owner() + ": option '" + key + "' must be an integer or a pair, got " +
                   v.dump());
}

int64_t read_single(Options& o, const std::string& key, int64_t fallback) {
  const json& v = o.value(key);
  if (v.is_null()) return fallback;
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_array() && v.size() == 1 && v[0].is_number_integer()) return v[0].get<int64_t>();
  throw UsageError(o.owner() + ": option '" + key + "' must be an integer or a list of one, got " +
                   v.dump());
}

bool read_padding(Options& o) {
  const auto p = o.get<std::string>("padding");
  if (p != "valid" && p != "same")
    throw UsageError(o.owner() + ": padding must be 'valid' or 'same', got '" + p + "'");
  return p == "same";
}

void require_channels_last(Options& o) {
  const auto f = o.get<std::string>("data_format");
  if (f != "channels_last")
    throw UsageError(o.owner() + ": only data_format='channels_last' (NHWC) is supported, got '" +
                     f + "'");
}

namespace {

class Conv2D final : public Layer {
 public:
  Conv2D(Options& o, const std::string& name, bool one_d) : Layer(name), one_d_(one_d) {
    filters_ = o.get<int64_t>("filters");
    if (one_d_) {
      kh_ = sh_ = 1;
      kw_ = read_single(o, "kernel_size", 0);
      sw_ = read_single(o, "strides", 1);
      const auto padding = o.get<std::string>("padding");
      causal_ = padding == "causal";
      same_ = padding == "same";
      if (!causal_ && !same_ && padding != "valid")
        throw UsageError(who() + ": padding must be 'valid', 'same' or 'causal', got '" + padding +
                         "'");
    } else {
      auto [kh, kw] = read_pair(o, "kernel_size", {0, 0});
      kh_ = kh;
      kw_ = kw;
      auto [sh, sw] = read_pair(o, "strides", {1, 1});
      sh_ = sh;
      sw_ = sw;
      same_ = read_padding(o);
    }
    if (kh_ <= 0 || kw_ <= 0) throw UsageError(who() + ": kernel_size is required and positive");
    require_channels_last(o);
    act_ = parse_activation(o.get<std::string>("activation"), who());
    use_bias_ = o.get<bool>("use_bias");
    kernel_init_ = o.get<std::string>("kernel_initializer");
    bias_init_ = o.get<std::string>("bias_initializer");
    if (filters_ <= 0 || sh_ <= 0 || sw_ <= 0)
      throw UsageError(who() + ": filters and strides must be positive");
  }
  const char* kind() const override { return one_d_ ? "Conv1D" : "Conv2D"; }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    const Spatial s = expect_spatial(in[0], one_d_);
    h_ = s.h;
    w_ = s.w;
    c_ = s.c;
    const auto g = geometry(1);
    if (g.oh <= 0 || g.ow <= 0)
      throw UsageError(who() + ": kernel " + (one_d_ ? "" : std::to_string(kh_) + "x") +
                       std::to_string(kw_) + " does not fit input " +
                       in[0].with_batch(0).str(true));
    Param& k =
        add_param("kernel", one_d_ ? Shape{kw_, c_, filters_} : Shape{kh_, kw_, c_, filters_});
    initialize(k.value, kernel_init_, kh_ * kw_ * c_, kh_ * kw_ * filters_, rng, who());
    if (use_bias_) {
      Param& b = add_param("bias", Shape{filters_});
      initialize(b.value, bias_init_, 0, 0, rng, who());
    }
    return output_shape_ = one_d_ ? Shape{g.ow, filters_} : Shape{g.oh, g.ow, filters_};
  }

  bool absorb_max_pool(const PoolWindow& p) override {
    if (one_d_) return false;
    const bool relu_or_linear =
        act_.kind == kernels::Activation::relu || act_.kind == kernels::Activation::linear;
    if (!relu_or_linear || p.same || p.sh != p.ph || p.sw != p.pw) return false;
    pool_ = p;
    return true;
  }

  const Tensor* give_output_moments() override {
    if (act_.kind != kernels::Activation::linear) return nullptr;  // they would be z's
    give_moments_ = true;
    return &moments_;
  }

  void forward(std::span<const Tensor* const> in, bool training) override {
    const Tensor& x = *in[0];
    const auto g = geometry(x.dim(0));
    if (pool_) return forward_pooled(x, g);
    ensure(out_, output_shape_.with_batch(g.n));
    Tensor& z = act_.reads_input() ? z_ : out_;
    if (act_.reads_input()) ensure(z_, out_.shape());
    ensure(workspace_, Shape{kernels::conv2d_workspace_floats(ex_, g)});
    const bool fuse = act_.kind == kernels::Activation::relu;
    const Tensor& bias = use_bias_ ? params_[1].value : no_bias_;
    Tensor* moments = nullptr;
    if (give_moments_ && training) {
      ensure(moments_, Shape{g.n, 2, filters_});
      moments = &moments_;
    }
    const Tensor& xc = in_compute_type(x, x_narrow_);
    const Tensor& kernel = in_compute_type(params_[0].value, kernel_narrow_);
    if (!kernels::conv2d_forward(ex_, g, xc, kernel, bias, z, fuse, workspace_, moments))
      moments_ = Tensor();  // none this step: the batch norm reads its input
    if (!fuse) kernels::activation_forward(ex_, act_, z, out_);
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    const Tensor& x = *in[0];
    const auto g = geometry(x.dim(0));
    Tensor& db = use_bias_ ? params_[1].grad : no_bias_;
    // The operands of this step's forward: in the compute type, rounded there.
    const bool narrow = compute_ != DType::f32;
    const Tensor& xc = narrow ? x_narrow_ : x;
    const Tensor& kernel = narrow ? kernel_narrow_ : params_[0].value;
    if (pool_) return backward_pooled(xc, g, dy, db, need_dx[0]);
    // Without an input gradient (a first layer) the ReLU mask is fused into
    // the filter gradient and dz is never written out.
    if (act_.kind == kernels::Activation::relu && !need_dx[0]) {
      kernels::conv2d_backward_filter(ex_, g, xc, dy, &out_, params_[0].grad, db, workspace_);
      return;
    }
    const Tensor* dz = &dy;
    if (act_.kind != kernels::Activation::linear) {
      ensure(dz_, out_.shape());
      kernels::activation_backward(ex_, act_, z_, out_, dy, dz_);
      dz = &dz_;
    }
    // Rounded to the compute type once for both gradients, where no bias
    // gradient wants it in float32.
    if (narrow && need_dx[0] && !use_bias_) dz = &in_compute_type(*dz, dz_narrow_);
    kernels::conv2d_backward_filter(ex_, g, xc, *dz, nullptr, params_[0].grad, db, workspace_);
    if (need_dx[0]) {
      ensure(dx_[0], x.shape());
      kernels::conv2d_backward_data(ex_, g, *dz, kernel, dx_[0], workspace_);
    }
  }

  json config() const override {
    json c = Layer::config();
    c["filters"] = filters_;
    if (one_d_) {
      c["kernel_size"] = {kw_};
      c["strides"] = {sw_};
      c["padding"] = causal_ ? "causal" : same_ ? "same" : "valid";
      c["dilation_rate"] = {1};
    } else {
      c["kernel_size"] = {kh_, kw_};
      c["strides"] = {sh_, sw_};
      c["padding"] = same_ ? "same" : "valid";
      c["dilation_rate"] = {1, 1};
    }
    c["data_format"] = "channels_last";
    c["activation"] = activation_name(act_.kind);
    c["use_bias"] = use_bias_;
    return c;
  }

 private:
  // Causal padding (Conv1D): kw - 1 zeros before the sequence, none after,
  // so that output t sees inputs up to t only.
  kernels::ConvGeometry geometry(int64_t n) const {
    auto g = kernels::conv_geometry(n, h_, w_, c_, kh_, kw_, filters_, sh_, sw_, same_);
    if (causal_) {
      g.pad_left = kw_ - 1;
      g.ow = (w_ - 1) / sw_ + 1;
    }
    return g;
  }
  kernels::PoolGeometry pool_geometry(const kernels::ConvGeometry& g) const {
    return kernels::pool_geometry(g.n, g.oh, g.ow, filters_, pool_->ph, pool_->pw, pool_->sh,
                                  pool_->sw, pool_->same);
  }

  // With a max pooling absorbed (absorb_max_pool): out_ is the pooling's
  // output, in one pass where the backend has the kernel, else through the
  // convolution's output in conv_out_.
  void forward_pooled(const Tensor& x, const kernels::ConvGeometry& g) {
    const auto pg = pool_geometry(g);
    const bool relu = act_.kind == kernels::Activation::relu;
    ensure(out_, Shape{g.n, pg.oh, pg.ow, filters_});
    ensure(argmax_, out_.shape(), DType::i32);
    ensure(workspace_, Shape{kernels::conv2d_workspace_floats(ex_, g)});
    const Tensor& bias = use_bias_ ? params_[1].value : no_bias_;
    const Tensor& xc = in_compute_type(x, x_narrow_);
    const Tensor& kernel = in_compute_type(params_[0].value, kernel_narrow_);
    pooled_in_one_pass_ = kernels::conv2d_max_pool_forward(ex_, g, pg, xc, kernel, bias, out_,
                                                           argmax_, relu, workspace_);
    if (pooled_in_one_pass_) return;
    ensure(conv_out_, Shape{g.n, g.oh, g.ow, filters_});
    kernels::conv2d_forward(ex_, g, xc, kernel, bias, conv_out_, relu, workspace_, nullptr);
    kernels::max_pool_forward(ex_, pg, conv_out_, out_, argmax_);
  }

  void backward_pooled(const Tensor& xc, const kernels::ConvGeometry& g, const Tensor& dy,
                       Tensor& db, bool need_dx) {
    if (need_dx)  // nn::Model fuses only a convolution of the model's input
      throw std::logic_error(who() + ": an input gradient asked of a convolution that pools");
    const auto pg = pool_geometry(g);
    const Tensor* relu_y = act_.kind == kernels::Activation::relu ? &out_ : nullptr;
    if (pooled_in_one_pass_) {
      kernels::conv2d_max_pool_backward_filter(ex_, g, pg, xc, dy, argmax_, relu_y, params_[0].grad,
                                               db, workspace_);
      return;
    }
    ensure(dz_, conv_out_.shape());
    kernels::max_pool_backward(ex_, pg, dy, argmax_, dz_);
    kernels::conv2d_backward_filter(ex_, g, xc, dz_, relu_y ? &conv_out_ : nullptr, params_[0].grad,
                                    db, workspace_);
  }

  int64_t filters_ = 0, kh_ = 0, kw_ = 0, sh_ = 1, sw_ = 1, h_ = 0, w_ = 0, c_ = 0;
  bool one_d_, same_ = false, causal_ = false, use_bias_ = true;
  kernels::ActivationFn act_;
  std::string kernel_init_, bias_init_;
  Tensor z_;  // the pre-activation, where the activation's backward reads it
  Tensor dz_, workspace_;
  Tensor no_bias_;  // undefined: the bias and its gradient of a convolution without one
  Tensor x_narrow_, kernel_narrow_;  // the step's operands in a narrower compute type
  Tensor dz_narrow_;                 // the output gradient in it, for both gradients
  bool give_moments_ = false;        // a batch norm after this layer takes them
  Tensor moments_;                   // per-image moments of the output (op_list.hpp)
  std::optional<PoolWindow> pool_;   // an absorbed max pooling's window
  Tensor conv_out_, argmax_;         // the convolution's output (unfused); the winners
  bool pooled_in_one_pass_ = false;  // the last forward's path
};

}  // namespace

namespace {
LayerInfo conv_layer(const char* name, bool one_d, const char* doc) {
  const OptionType size = one_d ? OptionType::single : OptionType::pair;
  return {
      .about = {.names = {name},
                .doc = doc,
                .schema = {{"filters", OptionType::integer, kRequired, "output channels"},
                           {"kernel_size", size, kRequired,
                            one_d ? "the window" : "the window, k or {kh, kw}"},
                           {"strides", size, 1, one_d ? "the step" : "the step, s or {sh, sw}"},
                           one_d ? Schema::Entry{"padding", OptionType::string, "valid",
                                                 "'valid', 'same' or 'causal' (zeros before "
                                                 "the sequence only)"}
                                 : padding_option(),
                           data_format_option(),
                           {"activation", OptionType::string, "linear", "applied to the output"},
                           {"use_bias", OptionType::boolean, true, "whether to add a bias"},
                           {"kernel_initializer", OptionType::string, "glorot_uniform",
                            "the kernel's initial values"},
                           {"bias_initializer", OptionType::string, "zeros",
                            "the bias' initial values"}},
                .positional = {"filters", "kernel_size", "strides", "padding"}},
      .make = [one_d](Options& o, const std::string& layer_name) {
        return std::make_unique<Conv2D>(o, layer_name, one_d);
      }};
}
}  // namespace

const LayerInfo& conv2d_layer() {
  static const LayerInfo info =
      conv_layer("Conv2D", false, "a 2-D convolution of NHWC images with an HWIO kernel");
  return info;
}

const LayerInfo& conv1d_layer() {
  static const LayerInfo info =
      conv_layer("Conv1D", true, "a 1-D convolution of (batch, steps, channels) sequences");
  return info;
}

}  // namespace drun::nn

// MaxPooling2D, AveragePooling2D and GlobalAveragePooling2D on NHWC inputs.
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

class Pool2D final : public Layer {
 public:
  Pool2D(Options& o, const std::string& name, bool max) : Layer(name), max_(max) {
    auto [ph, pw] = read_pair(o, "pool_size", {});
    auto [sh, sw] = read_pair(o, "strides", {ph, pw});
    if (ph <= 0 || pw <= 0 || sh <= 0 || sw <= 0)
      throw UsageError(who() + ": pool_size and strides must be positive");
    ph_ = ph;
    pw_ = pw;
    sh_ = sh;
    sw_ = sw;
    same_ = read_padding(o);
    require_channels_last(o);
  }
  const char* kind() const override { return max_ ? "MaxPooling2D" : "AveragePooling2D"; }
  std::optional<PoolWindow> max_pool_window() const override {
    if (!max_) return std::nullopt;
    return PoolWindow{ph_, pw_, sh_, sw_, same_};
  }

  Shape build(std::span<const Shape> in, Rng&) override {
    expect_rank(in[0], 3, "images (batch, height, width, channels)");
    h_ = in[0][0];
    w_ = in[0][1];
    c_ = in[0][2];
    const auto g = geometry(1);
    if (g.oh <= 0 || g.ow <= 0)
      throw UsageError(who() + ": pool " + std::to_string(ph_) + "x" + std::to_string(pw_) +
                       " does not fit input " + in[0].with_batch(0).str(true));
    return output_shape_ = Shape{g.oh, g.ow, c_};
  }

  void forward(std::span<const Tensor* const> in, bool) override {
    const auto g = geometry(in[0]->dim(0));
    ensure(out_, Shape{g.n, g.oh, g.ow, c_});
    if (max_) {
      ensure(argmax_, out_.shape(), DType::i32);
      kernels::max_pool_forward(ex_, g, *in[0], out_, argmax_);
    } else {
      kernels::avg_pool_forward(ex_, g, *in[0], out_);
    }
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    const auto g = geometry(in[0]->dim(0));
    ensure(dx_[0], in[0]->shape());
    if (max_)
      kernels::max_pool_backward(ex_, g, dy, argmax_, dx_[0]);
    else
      kernels::avg_pool_backward(ex_, g, dy, dx_[0]);
  }

  json config() const override {
    json c = Layer::config();
    c["pool_size"] = {ph_, pw_};
    c["strides"] = {sh_, sw_};
    c["padding"] = same_ ? "same" : "valid";
    c["data_format"] = "channels_last";
    return c;
  }

 private:
  kernels::PoolGeometry geometry(int64_t n) const {
    return kernels::pool_geometry(n, h_, w_, c_, ph_, pw_, sh_, sw_, same_);
  }
  bool max_;
  int64_t ph_ = 2, pw_ = 2, sh_ = 2, sw_ = 2, h_ = 0, w_ = 0, c_ = 0;
  bool same_ = false;
  Tensor argmax_;
};

class GlobalAveragePooling2D final : public Layer {
 public:
  GlobalAveragePooling2D(Options& o, const std::string& name) : Layer(name) {
    require_channels_last(o);
  }
  const char* kind() const override { return "GlobalAveragePooling2D"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    expect_rank(in[0], 3, "images (batch, height, width, channels)");
    return output_shape_ = Shape{in[0][2]};
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    ensure(out_, Shape{in[0]->dim(0), in[0]->dim(-1)});
    kernels::global_avg_pool_forward(ex_, *in[0], out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    ensure(dx_[0], in[0]->shape());
    kernels::global_avg_pool_backward(ex_, dy, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    c["data_format"] = "channels_last";
    c["keepdims"] = false;
    return c;
  }
};

}  // namespace

namespace {
LayerInfo pool_layer(std::vector<std::string> names, bool max, const char* doc) {
  return {.about = {.names = std::move(names),
                    .doc = doc,
                    .schema = {{"pool_size", OptionType::pair, 2, "the window, k or {kh, kw}"},
                               {"strides", OptionType::pair, nullptr,
                                "the step, s or {sh, sw} (default: pool_size)"},
                               padding_option(),
                               data_format_option()},
                    .positional = {"pool_size", "strides", "padding"}},
          .make = [max](Options& o, const std::string& name) {
            return std::make_unique<Pool2D>(o, name, max);
          }};
}
}  // namespace

const LayerInfo& max_pooling2d_layer() {
  static const LayerInfo info =
      pool_layer({"MaxPooling2D", "MaxPool2D"}, true, "the maximum of each window of NHWC images");
  return info;
}

const LayerInfo& average_pooling2d_layer() {
  static const LayerInfo info = pool_layer({"AveragePooling2D", "AvgPool2D"}, false,
                                           "the mean of each window of NHWC images");
  return info;
}

const LayerInfo& global_average_pooling2d_layer() {
  static const LayerInfo info{.about = {.names = {"GlobalAveragePooling2D", "GlobalAvgPool2D"},
                                        .doc = "the mean of each channel over height and width",
                                        .schema = {data_format_option()}},
                              .make = [](Options& o, const std::string& name) {
                                return std::make_unique<GlobalAveragePooling2D>(o, name);
                              }};
  return info;
}

}  // namespace drun::nn

// Pooling over NHWC images and, as images one row high, over (batch, steps,
// channels) sequences: MaxPooling1D/2D, AveragePooling1D/2D and the global
// poolings (GlobalMaxPooling's window is the whole image or sequence).
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

class Pool2D final : public Layer {
 public:
  Pool2D(Options& o, const std::string& name, bool max, bool one_d)
      : Layer(name), max_(max), one_d_(one_d) {
    auto [ph, pw] = one_d ? std::pair<int64_t, int64_t>{1, read_single(o, "pool_size", 0)}
                          : read_pair(o, "pool_size", {});
    auto [sh, sw] = one_d ? std::pair<int64_t, int64_t>{1, read_single(o, "strides", pw)}
                          : read_pair(o, "strides", {ph, pw});
    if (ph <= 0 || pw <= 0 || sh <= 0 || sw <= 0)
      throw UsageError(who() + ": pool_size and strides must be positive");
    ph_ = ph;
    pw_ = pw;
    sh_ = sh;
    sw_ = sw;
    same_ = read_padding(o);
    require_channels_last(o);
  }
  const char* kind() const override {
    if (one_d_) return max_ ? "MaxPooling1D" : "AveragePooling1D";
    return max_ ? "MaxPooling2D" : "AveragePooling2D";
  }
  std::optional<PoolWindow> max_pool_window() const override {
    if (!max_ || one_d_) return std::nullopt;
    return PoolWindow{ph_, pw_, sh_, sw_, same_};
  }

  Shape build(std::span<const Shape> in, Rng&) override {
    const Spatial s = expect_spatial(in[0], one_d_);
    h_ = s.h;
    w_ = s.w;
    c_ = s.c;
    const auto g = geometry(1);
    if (g.oh <= 0 || g.ow <= 0)
      throw UsageError(who() + ": pool " + (one_d_ ? "" : std::to_string(ph_) + "x") +
                       std::to_string(pw_) + " does not fit input " +
                       in[0].with_batch(0).str(true));
    return output_shape_ = one_d_ ? Shape{g.ow, c_} : Shape{g.oh, g.ow, c_};
  }

  void forward(std::span<const Tensor* const> in, bool) override {
    const auto g = geometry(in[0]->dim(0));
    ensure(out_, output_shape_.with_batch(g.n));
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
    c["pool_size"] = one_d_ ? json{pw_} : json{ph_, pw_};
    c["strides"] = one_d_ ? json{sw_} : json{sh_, sw_};
    c["padding"] = same_ ? "same" : "valid";
    c["data_format"] = "channels_last";
    return c;
  }

 private:
  kernels::PoolGeometry geometry(int64_t n) const {
    return kernels::pool_geometry(n, h_, w_, c_, ph_, pw_, sh_, sw_, same_);
  }
  bool max_, one_d_;
  int64_t ph_ = 2, pw_ = 2, sh_ = 2, sw_ = 2, h_ = 0, w_ = 0, c_ = 0;
  bool same_ = false;
  Tensor argmax_;
};

// The kernels read (N, positions..., C) whatever the rank between.
class GlobalAveragePooling2D final : public Layer {
 public:
  GlobalAveragePooling2D(Options& o, const std::string& name, bool one_d)
      : Layer(name), one_d_(one_d) {
    require_channels_last(o);
  }
  const char* kind() const override {
    return one_d_ ? "GlobalAveragePooling1D" : "GlobalAveragePooling2D";
  }
  Shape build(std::span<const Shape> in, Rng&) override {
    return output_shape_ = Shape{expect_spatial(in[0], one_d_).c};
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

 private:
  bool one_d_;
};

// The maximum of each channel: max pooling with one window over everything.
class GlobalMaxPooling final : public Layer {
 public:
  GlobalMaxPooling(Options& o, const std::string& name, bool one_d) : Layer(name), one_d_(one_d) {
    require_channels_last(o);
  }
  const char* kind() const override { return one_d_ ? "GlobalMaxPooling1D" : "GlobalMaxPooling2D"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    return output_shape_ = Shape{expect_spatial(in[0], one_d_).c};
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    const auto g = geometry(in[0]->shape());
    ensure(out_, Shape{g.n, g.c});
    ensure(argmax_, out_.shape(), DType::i32);
    kernels::max_pool_forward(ex_, g, *in[0], out_, argmax_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    ensure(dx_[0], in[0]->shape());
    kernels::max_pool_backward(ex_, geometry(in[0]->shape()), dy, argmax_, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    c["data_format"] = "channels_last";
    c["keepdims"] = false;
    return c;
  }

 private:
  static kernels::PoolGeometry geometry(const Shape& x) {
    const int64_t h = x.rank() == 4 ? x[1] : 1, w = x[-2];
    return kernels::pool_geometry(x[0], h, w, x[-1], h, w, h, w, false);
  }
  bool one_d_;
  Tensor argmax_;
};

}  // namespace

namespace {
LayerInfo pool_layer(std::vector<std::string> names, bool max, bool one_d, const char* doc) {
  const OptionType size = one_d ? OptionType::single : OptionType::pair;
  return {.about = {.names = std::move(names),
                    .doc = doc,
                    .schema = {{"pool_size", size, 2,
                                one_d ? "the window" : "the window, k or {kh, kw}"},
                               {"strides", size, nullptr,
                                one_d ? "the step (default: pool_size)"
                                      : "the step, s or {sh, sw} (default: pool_size)"},
                               padding_option(),
                               data_format_option()},
                    .positional = {"pool_size", "strides", "padding"}},
          .make = [max, one_d](Options& o, const std::string& name) {
            return std::make_unique<Pool2D>(o, name, max, one_d);
          }};
}

template <class L>
LayerInfo global_layer(std::vector<std::string> names, bool one_d, const char* doc) {
  return {.about = {.names = std::move(names), .doc = doc, .schema = {data_format_option()}},
          .make = [one_d](Options& o, const std::string& name) {
            return std::make_unique<L>(o, name, one_d);
          }};
}
}  // namespace

const LayerInfo& max_pooling2d_layer() {
  static const LayerInfo info = pool_layer({"MaxPooling2D", "MaxPool2D"}, true, false,
                                           "the maximum of each window of NHWC images");
  return info;
}

const LayerInfo& average_pooling2d_layer() {
  static const LayerInfo info = pool_layer({"AveragePooling2D", "AvgPool2D"}, false, false,
                                           "the mean of each window of NHWC images");
  return info;
}

const LayerInfo& max_pooling1d_layer() {
  static const LayerInfo info = pool_layer({"MaxPooling1D", "MaxPool1D"}, true, true,
                                           "the maximum of each window of sequences");
  return info;
}

const LayerInfo& average_pooling1d_layer() {
  static const LayerInfo info = pool_layer({"AveragePooling1D", "AvgPool1D"}, false, true,
                                           "the mean of each window of sequences");
  return info;
}

const LayerInfo& global_average_pooling2d_layer() {
  static const LayerInfo info =
      global_layer<GlobalAveragePooling2D>({"GlobalAveragePooling2D", "GlobalAvgPool2D"}, false,
                                           "the mean of each channel over height and width");
  return info;
}

const LayerInfo& global_average_pooling1d_layer() {
  static const LayerInfo info = global_layer<GlobalAveragePooling2D>(
      {"GlobalAveragePooling1D", "GlobalAvgPool1D"}, true, "the mean of each channel over steps");
  return info;
}

const LayerInfo& global_max_pooling2d_layer() {
  static const LayerInfo info =
      global_layer<GlobalMaxPooling>({"GlobalMaxPooling2D", "GlobalMaxPool2D"}, false,
                                     "the maximum of each channel over height and width");
  return info;
}

const LayerInfo& global_max_pooling1d_layer() {
  static const LayerInfo info = global_layer<GlobalMaxPooling>(
      {"GlobalMaxPooling1D", "GlobalMaxPool1D"}, true, "the maximum of each channel over steps");
  return info;
}

}  // namespace drun::nn

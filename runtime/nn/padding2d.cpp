// ZeroPadding2D and Cropping2D on NHWC images: zeros around each image, or
// rows and columns cut from its edges. Each is a strided copy of the image
// into (or out of) the larger one's interior, and the same copy backwards.
#include "nn/copy_views.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
// Keras' forms: n; {h, w} (each on both sides); {{top, bottom}, {left, right}}.
struct Edges {
  int64_t top, bottom, left, right;
};

Edges read_edges(Options& o, const std::string& key) {
  const json& v = o.value(key);
  const auto bad = [&] {
    return UsageError(o.owner() + ": " + key +
                      " must be n, {h, w} or {{top, bottom}, {left, right}} of sizes >= 0, got " +
                      v.dump());
  };
  const auto size = [&](const json& e) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0) throw bad();
    return e.get<int64_t>();
  };
  if (v.is_number_integer()) {
    const int64_t n = size(v);
    return {n, n, n, n};
  }
  if (!v.is_array() || v.size() != 2) throw bad();
  if (v[0].is_array() && v[1].is_array() && v[0].size() == 2 && v[1].size() == 2)
    return {size(v[0][0]), size(v[0][1]), size(v[1][0]), size(v[1][1])};
  const int64_t h = size(v[0]), w = size(v[1]);
  return {h, h, w, w};
}

class Padding2D final : public Layer {
 public:
  // crop: Cropping2D (cuts the edges) rather than ZeroPadding2D (adds them).
  Padding2D(Options& o, const std::string& name, bool crop)
      : Layer(name), crop_(crop), e_(read_edges(o, crop ? "cropping" : "padding")) {
    require_channels_last(o);
  }
  const char* kind() const override { return crop_ ? "Cropping2D" : "ZeroPadding2D"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    expect_rank(in[0], 3, "images (batch, height, width, channels)");
    const int64_t sign = crop_ ? -1 : 1;
    const Shape out{in[0][0] + sign * (e_.top + e_.bottom), in[0][1] + sign * (e_.left + e_.right),
                    in[0][2]};
    if (out[0] <= 0 || out[1] <= 0)
      throw UsageError(who() + ": cropping " + edges_json().dump() + " leaves nothing of " +
                       in[0].with_batch(0).str(true));
    return output_shape_ = out;
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    ensure(out_, output_shape_.with_batch(x.dim(0)));
    if (!crop_) kernels::fill(ex_, 0.0f, out_);
    kernels::strided_copy(ex_, interior(x.shape(), false), x, 0.0f, out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    ensure(dx_[0], in[0]->shape());
    if (crop_) kernels::fill(ex_, 0.0f, dx_[0]);
    kernels::strided_copy(ex_, interior(in[0]->shape(), true), dy, 0.0f, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    c[crop_ ? "cropping" : "padding"] = edges_json();
    c["data_format"] = "channels_last";
    return c;
  }

 private:
  json edges_json() const { return {{e_.top, e_.bottom}, {e_.left, e_.right}}; }
  // The copy between the smaller image (rows of W * C values) and the
  // larger one's interior; forward reads the input, backward the gradient.
  kernels::CopyGeometry interior(const Shape& x, bool backward) const {
    const Shape y = output_shape_.with_batch(x[0]);
    const Shape& small = crop_ ? y : x;
    const Shape& large = crop_ ? x : y;
    const int64_t c = x[3];
    const Shape size{small[0], small[1], small[2] * c};
    const Strides small_strides{small[1] * small[2] * c, small[2] * c, 1};
    const Strides large_strides{large[1] * large[2] * c, large[2] * c, 1};
    const int64_t at = e_.top * large[2] * c + e_.left * c;
    // The copy's direction: from the larger image where it is read.
    const bool from_large = crop_ != backward;
    return from_large ? copy_geometry(size, large_strides, small_strides, at, 0)
                      : copy_geometry(size, small_strides, large_strides, 0, at);
  }
  bool crop_;
  Edges e_;
};

LayerInfo padding_layer(const char* name, const char* key, bool crop, const char* doc) {
  return {
      .about = {.names = {name},
                .doc = doc,
                .schema = {{key, OptionType::any, 1, "n, {h, w} or {{top, bottom}, {left, right}}"},
                           data_format_option()},
                .positional = {key}},
      .make = [crop](Options& o, const std::string& layer_name) {
        return std::make_unique<Padding2D>(o, layer_name, crop);
      }};
}
}  // namespace

const LayerInfo& zero_padding2d_layer() {
  static const LayerInfo info =
      padding_layer("ZeroPadding2D", "padding", false, "zeros around NHWC images");
  return info;
}

const LayerInfo& cropping2d_layer() {
  static const LayerInfo info = padding_layer("Cropping2D", "cropping", true,
                                              "cuts rows and columns from NHWC images' edges");
  return info;
}

}  // namespace drun::nn

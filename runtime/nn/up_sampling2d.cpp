// UpSampling2D, nearest neighbour: each pixel of NHWC images repeated sh x sw
// times (strides of 0 over the repeats); backward sums each pixel's repeats.
#include "nn/copy_views.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class UpSampling2D final : public Layer {
 public:
  UpSampling2D(Options& o, const std::string& name) : Layer(name) {
    auto [sh, sw] = read_pair(o, "size", {2, 2});
    if (sh < 1 || sw < 1) throw UsageError(who() + ": size must be positive");
    sh_ = sh;
    sw_ = sw;
    const auto interpolation = o.get<std::string>("interpolation");
    if (interpolation != "nearest")
      throw UsageError(who() + ": only interpolation='nearest' is supported, got '" +
                       interpolation + "'");
    require_channels_last(o);
  }
  const char* kind() const override { return "UpSampling2D"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    expect_rank(in[0], 3, "images (batch, height, width, channels)");
    return output_shape_ = Shape{in[0][0] * sh_, in[0][1] * sw_, in[0][2]};
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
    ensure(out_, output_shape_.with_batch(n));
    // The output as (n, h, sh, w, sw, c), contiguous; the input repeated over sh and sw.
    const Shape size{n, h, sh_, w, sw_, c};
    kernels::strided_copy(
        ex_, copy_geometry(size, {h * w * c, w * c, 0, c, 0, 1}, row_major_strides(size)), x, 0.0f,
        out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    const Shape& x = in[0]->shape();
    const int64_t h = x[1], w = x[2], c = x[3], ow = w * sw_;
    ensure(dx_[0], x);
    auto g = copy_geometry(x, {h * sh_ * ow * c, sh_ * ow * c, sw_ * c, 1}, row_major_strides(x));
    g.sum_rank = 2;
    g.sum_size[0] = sh_;
    g.sum_stride[0] = ow * c;
    g.sum_size[1] = sw_;
    g.sum_stride[1] = c;
    kernels::strided_copy(ex_, g, dy, 0.0f, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    c["size"] = {sh_, sw_};
    c["data_format"] = "channels_last";
    c["interpolation"] = "nearest";
    return c;
  }

 private:
  int64_t sh_ = 2, sw_ = 2;
};
}  // namespace

const LayerInfo& up_sampling2d_layer() {
  static const LayerInfo info{
      .about = {.names = {"UpSampling2D"},
                .doc = "repeats each pixel of NHWC images (nearest neighbour)",
                .schema = {{"size", OptionType::pair, 2, "the factors, s or {sh, sw}"},
                           data_format_option(),
                           {"interpolation", OptionType::string, "nearest", "only 'nearest'"}},
                .positional = {"size"}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<UpSampling2D>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

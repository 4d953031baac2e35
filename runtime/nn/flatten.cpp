// Flatten: (N, H, W, C) -> (N, H*W*C) in (H, W, C) order, Keras' channels_last
// order. Output and input gradient are views of the same storage: no copies.
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class Flatten final : public Layer {
 public:
  Flatten(Options& o, const std::string& name) : Layer(name) {
    const auto f = o.get<std::string>("data_format");
    if (f != "channels_last") throw UsageError(who() + ": only channels_last is supported");
  }
  const char* kind() const override { return "Flatten"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    return output_shape_ = Shape{in[0].numel()};
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    out_ = x.reshaped(Shape{x.dim(0), x.numel() / x.dim(0)});
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (need_dx[0]) dx_[0] = dy.reshaped(in[0]->shape());
  }
  json config() const override {
    json c = Layer::config();
    c["data_format"] = "channels_last";
    return c;
  }
};
}  // namespace

const LayerInfo& flatten_layer() {
  static const LayerInfo info{
      .about = {.names = {"Flatten"},
                .doc = "(batch, ...) to (batch, features) in channels_last order",
                .schema = {data_format_option()}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<Flatten>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

// Multiply: the elementwise product of two or more inputs of one shape
// (gates, attention-like weighting).
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class Multiply final : public Layer {
 public:
  Multiply(Options&, const std::string& name) : Layer(name) {}
  const char* kind() const override { return "Multiply"; }
  int num_inputs() const override { return -1; }  // any number >= 2
  Shape build(std::span<const Shape> in, Rng&) override {
    expect_same_shapes(in);
    dx_.resize(in.size());
    return output_shape_ = in[0];
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    ensure(out_, in[0]->shape());
    kernels::mul(ex_, *in[0], *in[1], out_);
    for (size_t i = 2; i < in.size(); ++i) kernels::mul(ex_, out_, *in[i], out_);
  }
  // d/dx_i = dy times the product of the other inputs.
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    for (size_t i = 0; i < in.size(); ++i) {
      if (!need_dx[i]) continue;
      ensure(dx_[i], in[i]->shape());
      const Tensor* from = &dy;
      for (size_t j = 0; j < in.size(); ++j) {
        if (j == i) continue;
        kernels::mul(ex_, *from, *in[j], dx_[i]);
        from = &dx_[i];
      }
    }
  }
};
}  // namespace

const LayerInfo& multiply_layer() {
  static const LayerInfo info{
      .about = {.names = {"Multiply"}, .doc = "the elementwise product of its inputs"},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<Multiply>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

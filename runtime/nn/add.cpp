// Add: the elementwise sum of two or more inputs of one shape (residual blocks).
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class Add final : public Layer {
 public:
  Add(Options&, const std::string& name) : Layer(name) {}
  const char* kind() const override { return "Add"; }
  int num_inputs() const override { return -1; }  // any number >= 2
  Shape build(std::span<const Shape> in, Rng&) override {
    expect_same_shapes(in);
    dx_.resize(in.size());
    return output_shape_ = in[0];
  }
  bool absorb_relu() override { return relu_ = true; }
  const Tensor* relu_output_masked_by_model() const override { return relu_ ? &out_ : nullptr; }
  void forward(std::span<const Tensor* const> in, bool) override {
    ensure(out_, in[0]->shape());
    const size_t n = in.size();
    if (relu_ && n == 2) return kernels::add_relu(ex_, *in[0], *in[1], out_);
    kernels::add(ex_, *in[0], *in[1], out_);
    for (size_t i = 2; i < n; ++i) kernels::add(ex_, out_, *in[i], out_);
    if (relu_) kernels::activation_forward(ex_, kernels::Activation::relu, out_, out_);
  }
  // The gradient passes through unchanged (with a ReLU absorbed, the model
  // has masked it: relu_output_masked_by_model).
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    for (size_t i = 0; i < in.size(); ++i)
      if (need_dx[i]) dx_[i] = dy;
  }

 private:
  bool relu_ = false;  // a following ReLU layer absorbed (Layer::absorb_relu)
};
}  // namespace

const LayerInfo& add_layer() {
  static const LayerInfo info{
      .about = {.names = {"Add"}, .doc = "the elementwise sum of its inputs (a residual join)"},
      .make = [](Options& o, const std::string& name) { return std::make_unique<Add>(o, name); }};
  return info;
}

}  // namespace drun::nn

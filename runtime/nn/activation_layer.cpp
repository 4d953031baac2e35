// Activation (and its named forms ReLU, Softmax): y = act(x) elementwise, or
// over the last axis for softmax.
#include "nn/layers.hpp"

namespace drun::nn {

using kernels::Activation;

Activation parse_activation(const std::string& name, const std::string& owner) {
  if (name == "linear" || name.empty()) return Activation::linear;
  if (name == "relu") return Activation::relu;
  if (name == "sigmoid") return Activation::sigmoid;
  if (name == "tanh") return Activation::tanh;
  if (name == "softmax") return Activation::softmax;
  throw UsageError(owner + ": unknown activation '" + name +
                   "'; valid: linear, relu, sigmoid, tanh, softmax");
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::linear:
      return "linear";
    case Activation::relu:
      return "relu";
    case Activation::sigmoid:
      return "sigmoid";
    case Activation::tanh:
      return "tanh";
    case Activation::softmax:
      return "softmax";
  }
  return "linear";
}

namespace {
class ActivationLayer final : public Layer {
 public:
  ActivationLayer(Options& o, const std::string& name, const char* fixed)
      : Layer(name), fixed_(fixed != nullptr) {
    act_ = fixed ? parse_activation(fixed, who())
                 : parse_activation(o.require<std::string>("activation"), who());
  }
  const char* kind() const override {
    if (!fixed_) return "Activation";
    return act_ == Activation::relu ? "ReLU" : "Softmax";
  }
  Shape build(std::span<const Shape> in, Rng&) override { return output_shape_ = in[0]; }
  void forward(std::span<const Tensor* const> in, bool) override {
    ensure(out_, in[0]->shape());
    kernels::activation_forward(ex_, act_, *in[0], out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    ensure(dx_[0], in[0]->shape());
    kernels::activation_backward(ex_, act_, out_, dy, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    if (!fixed_) c["activation"] = activation_name(act_);
    if (fixed_ && act_ == Activation::softmax) c["axis"] = -1;
    return c;
  }

 private:
  bool fixed_;
  Activation act_;
};
}  // namespace

std::unique_ptr<Layer> make_activation(Options& o, const std::string& name, const char* fixed) {
  return std::make_unique<ActivationLayer>(o, name, fixed);
}

}  // namespace drun::nn

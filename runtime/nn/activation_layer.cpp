// Activation (and its named forms ReLU, Softmax, LeakyReLU): y = act(x)
// elementwise, or over the last axis for softmax. The activations and their
// names are those of kernels/activation_list.hpp.
#include "base/did_you_mean.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

using kernels::Activation;
using kernels::ActivationFn;

Activation parse_activation(const std::string& name, const std::string& owner) {
  if (name.empty()) return Activation::linear;
  if (const auto a = kernels::activation_from_name(name)) return *a;
  throw UsageError(owner + ": unknown activation '" + name + "'" +
                   did_you_mean_in_list(name, kernels::activation_names()) +
                   "; valid: " + kernels::activation_names());
}

namespace {

// The Keras layers that are one activation: their class name and activation.
struct Fixed {
  const char* kind;
  Activation act;
};
constexpr Fixed kFixed[] = {{"ReLU", Activation::relu},
                            {"Softmax", Activation::softmax},
                            {"LeakyReLU", Activation::leaky_relu}};

class ActivationLayer final : public Layer {
 public:
  ActivationLayer(Options& o, const std::string& name, const char* fixed)
      : Layer(name), fixed_(fixed) {
    if (!fixed) {
      act_ = parse_activation(o.get<std::string>("activation"), who());
      return;
    }
    act_ = parse_activation(fixed, who());
    if (act_.kind == Activation::leaky_relu) {
      // Keras 3's LeakyReLU: negative_slope, default 0.3 (Keras 2's alpha is
      // renamed when a Keras file is read).
      negative_slope_ = o.get<double>("negative_slope");
      if (!(negative_slope_ >= 0.0))
        throw UsageError(who() + ": negative_slope must be >= 0, got " +
                         json(negative_slope_).dump());
      act_.alpha = static_cast<float>(negative_slope_);
    }
  }
  const char* kind() const override {
    if (fixed_)
      for (const Fixed& f : kFixed)
        if (f.act == act_.kind) return f.kind;
    return "Activation";
  }
  Shape build(std::span<const Shape> in, Rng&) override { return output_shape_ = in[0]; }
  bool is_plain_relu() const override { return act_.kind == Activation::relu; }
  void forward(std::span<const Tensor* const> in, bool) override {
    ensure(out_, in[0]->shape());
    kernels::activation_forward(ex_, act_, *in[0], out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    ensure(dx_[0], in[0]->shape());
    kernels::activation_backward(ex_, act_, *in[0], out_, dy, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    if (!fixed_) c["activation"] = activation_name(act_.kind);
    if (fixed_ && act_.kind == Activation::softmax) c["axis"] = -1;
    if (fixed_ && act_.kind == Activation::leaky_relu) c["negative_slope"] = negative_slope_;
    return c;
  }

 private:
  bool fixed_;
  ActivationFn act_;
  double negative_slope_ = 0.0;  // LeakyReLU's, as given (act_.alpha rounds it to float)
};

}  // namespace

namespace {
LayerInfo::Maker fixed_to(const char* activation) {
  return [activation](Options& o, const std::string& name) {
    return std::make_unique<ActivationLayer>(o, name, activation);
  };
}
}  // namespace

const LayerInfo& activation_layer() {
  static const LayerInfo info{
      .about = {.names = {"Activation"},
                .doc = "an activation function applied to each value",
                .schema = {{"activation", OptionType::string, kRequired, "its Keras name"}},
                .positional = {"activation"}},
      .make = fixed_to(nullptr)};
  return info;
}

const LayerInfo& relu_layer() {
  static const LayerInfo info{.about = {.names = {"ReLU"}, .doc = "max(x, 0)"},
                              .make = fixed_to("relu")};
  return info;
}

const LayerInfo& softmax_layer() {
  static const LayerInfo info{
      .about = {.names = {"Softmax"}, .doc = "softmax over the last dimension"},
      .make = fixed_to("softmax"),
      .from_keras = [](json& config, const std::string& who) {
        if (config.value("axis", json(-1)) != -1)
          throw UsageError(who + ": axis " + config["axis"].dump() + " is not supported");
        config.erase("axis");
      }};
  return info;
}

const LayerInfo& leaky_relu_layer() {
  static const LayerInfo info{
      .about = {.names = {"LeakyReLU"},
                .doc = "x, or negative_slope * x below 0",
                .schema = {{"negative_slope", OptionType::number, 0.3, "the slope below 0"}},
                .positional = {"negative_slope"}},
      .make = fixed_to("leaky_relu"),
      .from_keras = [](json& config, const std::string&) {
        // Keras 2 calls the slope alpha.
        if (config.contains("alpha")) {
          config["negative_slope"] = config["alpha"];
          config.erase("alpha");
        }
      }};
  return info;
}

}  // namespace drun::nn

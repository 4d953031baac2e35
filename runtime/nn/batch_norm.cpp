// BatchNormalization over the channel (last) axis. Training uses the batch's
// statistics and moves the moving ones; inference uses the moving ones.
// Weights in Keras' order: gamma, beta (trainable), moving_mean, moving_variance.
#include <cmath>

#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class BatchNorm final : public Layer {
 public:
  BatchNorm(Options& o, const std::string& name) : Layer(name) {
    const json& axis = o.raw("axis");
    if (!axis.is_null() && !(axis.is_number_integer() && axis.get<int>() == -1) &&
        !(axis.is_array() && axis.size() == 1 && axis[0].get<int>() == 3))
      throw UsageError(who() + ": only axis=-1 (channels_last) is supported, got " + axis.dump());
    momentum_ = o.get<float>("momentum");
    epsilon_ = o.get<float>("epsilon");
    if (!o.get<bool>("center") || !o.get<bool>("scale"))
      throw UsageError(who() + ": center=false and scale=false are not supported");
  }
  const char* kind() const override { return "BatchNormalization"; }
  bool absorb_relu() override { return relu_ = true; }
  bool takes_input_moments() const override { return true; }
  void take_input_moments(const Tensor* m) override { input_moments_ = m; }
  Shape build(std::span<const Shape> in, Rng&) override {
    const int64_t c = in[0][-1];
    add_param("gamma", Shape{c}).value.fill(1.0f);
    add_param("beta", Shape{c});
    add_param("moving_mean", Shape{c}, false);
    add_param("moving_variance", Shape{c}, false).value.fill(1.0f);
    mean_ = Tensor::zeros(Shape{c});
    inv_std_ = Tensor::zeros(Shape{c});
    return output_shape_ = in[0];
  }
  void forward(std::span<const Tensor* const> in, bool training) override {
    const Tensor& x = *in[0];
    ensure(out_, x.shape());
    ensure(mean_, params_[0].value.shape());
    ensure(inv_std_, params_[0].value.shape());
    training_ = training;
    if (training)
      kernels::batchnorm_forward_train(
          ex_, x, params_[0].value, params_[1].value, epsilon_, momentum_, params_[2].value,
          params_[3].value, mean_, inv_std_, out_, relu_,
          input_moments_ && input_moments_->defined() ? input_moments_ : nullptr);
    else
      kernels::batchnorm_forward_infer(ex_, x, params_[0].value, params_[1].value, epsilon_,
                                       params_[2].value, params_[3].value, out_, relu_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool>) override {
    // Backward through the frozen statistics (fine-tuning) takes them from
    // the moving ones here, not in every inference forward: an evaluation on
    // a GPU then reads nothing back.
    if (!training_) frozen_statistics();
    // The batch statistics couple every input, so dx is always computed.
    ensure(dx_[0], in[0]->shape());
    kernels::batchnorm_backward(ex_, *in[0], dy, relu_ ? &out_ : nullptr, params_[0].value,
                                params_[1].value, mean_, inv_std_, training_, dx_[0],
                                params_[0].grad, params_[1].grad);
  }
  void frozen_statistics() {
    const Tensor mm = params_[2].value.to(Device::cpu);
    const Tensor mv = params_[3].value.to(Device::cpu);
    Tensor mean(mm.shape()), inv_std(mm.shape());
    for (int64_t j = 0; j < mean.numel(); ++j) {
      mean.f32()[j] = mm.f32()[j];
      inv_std.f32()[j] = 1.0f / std::sqrt(mv.f32()[j] + epsilon_);
    }
    mean_.copy_from(mean);
    inv_std_.copy_from(inv_std);
  }
  json config() const override {
    json c = Layer::config();
    c["axis"] = -1;
    c["momentum"] = momentum_;
    c["epsilon"] = epsilon_;
    c["center"] = true;
    c["scale"] = true;
    return c;
  }

 private:
  float momentum_ = 0.99f, epsilon_ = 1e-3f;
  bool training_ = true;
  bool relu_ = false;  // a following ReLU layer absorbed (Layer::absorb_relu)
  Tensor mean_, inv_std_;
  // The layer before's per-image moments of x, when it gives them (Layer).
  const Tensor* input_moments_ = nullptr;
};
}  // namespace

const LayerInfo& batch_normalization_layer() {
  static const LayerInfo info{
      .about = {.names = {"BatchNormalization"},
                .doc =
                    "normalises each channel by the batch's statistics (moving ones at inference)",
                .schema = {{"axis", OptionType::any, -1, "only -1, the channels"},
                           {"momentum", OptionType::number, 0.99, "of the moving statistics"},
                           {"epsilon", OptionType::number, 1e-3, "added to the variance"},
                           {"center", OptionType::boolean, true, "only true (beta is learnt)"},
                           {"scale", OptionType::boolean, true, "only true (gamma is learnt)"}}},
      .make = [](Options& o,
                 const std::string& name) { return std::make_unique<BatchNorm>(o, name); },
      .from_keras =
          [](json& config, const std::string&) {
            // Keras writes the channel axis as [3] or -1; drun names any other itself.
            const json axis = config.value("axis", json(-1));
            if (axis == -1 || (axis.is_array() && axis.size() == 1 && axis[0] == -1))
              config.erase("axis");
          }};
  return info;
}

}  // namespace drun::nn

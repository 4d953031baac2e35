// LayerNormalization over the last axis: each example's features (each time
// step's, for (batch, time, features)) normalised by their own mean and
// variance, then scaled by gamma and shifted by beta; the same in training
// and inference. Weights in Keras' order: gamma (scale=true), beta (center=true).
#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

class LayerNorm final : public Layer {
 public:
  LayerNorm(Options& o, const std::string& name) : Layer(name) {
    axis_ = o.value("axis");
    // Keras 3 keeps the axis as a list ([-1], or [2] for rank-3 inputs).
    const json a = axis_.is_array() && axis_.size() == 1 ? axis_[0] : axis_;
    if (!a.is_number_integer())
      throw UsageError(who() + ": normalises over the last axis only (axis=-1), got axis " +
                       axis_.dump());
    axis_index_ = a.get<int64_t>();
    epsilon_ = o.get<float>("epsilon");
    if (!(epsilon_ > 0.0f)) throw UsageError(who() + ": epsilon must be positive");
    center_ = o.get<bool>("center");
    scale_ = o.get<bool>("scale");
    gamma_init_ = o.get<std::string>("gamma_initializer");
    beta_init_ = o.get<std::string>("beta_initializer");
  }
  const char* kind() const override { return "LayerNormalization"; }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    // The last axis counted with the batch: per-example rank.
    if (in[0].rank() < 1 || (axis_index_ != -1 && axis_index_ != in[0].rank()))
      throw UsageError(who() + ": normalises over the last axis only (axis=-1 or " +
                       std::to_string(in[0].rank()) + " for input " +
                       in[0].with_batch(0).str(true) + "), got axis " + axis_.dump());
    const int64_t c = in[0][-1];
    if (scale_) initialize(add_param("gamma", Shape{c}).value, gamma_init_, c, c, rng, who());
    if (center_) initialize(add_param("beta", Shape{c}).value, beta_init_, c, c, rng, who());
    return output_shape_ = in[0];
  }

  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    ensure(out_, x.shape());
    ensure(mean_, Shape{x.numel() / x.dim(-1)});
    ensure(inv_std_, mean_.shape());
    kernels::layer_norm_forward(ex_, x, gamma(), beta(), epsilon_, mean_, inv_std_, out_);
  }

  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (need_dx[0]) ensure(dx_[0], in[0]->shape());
    Tensor none;
    kernels::layer_norm_backward(ex_, *in[0], dy, gamma(), mean_, inv_std_,
                                 need_dx[0] ? dx_[0] : none, scale_ ? params_[0].grad : none,
                                 center_ ? params_.back().grad : none);
  }

  json config() const override {
    json c = Layer::config();
    c["axis"] = -1;
    c["epsilon"] = epsilon_;
    c["center"] = center_;
    c["scale"] = scale_;
    c["rms_scaling"] = false;
    c["gamma_initializer"] = {{"class_name", "Ones"}, {"config", json::object()}};
    c["beta_initializer"] = {{"class_name", "Zeros"}, {"config", json::object()}};
    return c;
  }

 private:
  const Tensor& gamma() const { return scale_ ? params_[0].value : none_; }
  const Tensor& beta() const { return center_ ? params_.back().value : none_; }

  json axis_;
  int64_t axis_index_ = -1;
  float epsilon_ = 1e-3f;
  bool center_ = true, scale_ = true;
  std::string gamma_init_, beta_init_;
  Tensor mean_, inv_std_;  // per row, from the forward for the backward
  Tensor none_;            // an absent gamma or beta
};

}  // namespace

const LayerInfo& layer_normalization_layer() {
  static const LayerInfo info{
      .about =
          {.names = {"LayerNormalization"},
           .doc = "normalises each example's last axis by its own mean and variance",
           .schema = {{"axis", OptionType::any, -1, "only the last axis: -1"},
                      {"epsilon", OptionType::number, 1e-3, "added to the variance"},
                      {"center", OptionType::boolean, true, "whether beta is learnt"},
                      {"scale", OptionType::boolean, true, "whether gamma is learnt"},
                      {"gamma_initializer", OptionType::string, "ones", "gamma's initial values"},
                      {"beta_initializer", OptionType::string, "zeros", "beta's initial values"}}},
      .make = [](Options& o,
                 const std::string& name) { return std::make_unique<LayerNorm>(o, name); },
      .from_keras =
          [](json& config, const std::string& who) {
            // Keras 3's RMS normalisation (no mean) is another layer's arithmetic.
            if (config.value("rms_scaling", json(false)) != json(false))
              throw UsageError(who + ": rms_scaling = true is not supported by drun");
            config.erase("rms_scaling");
          }};
  return info;
}

}  // namespace drun::nn

// Dropout (inverted): in training each value is kept with probability
// 1 - rate and scaled by 1 / (1 - rate); at inference it is the identity.
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class Dropout final : public Layer {
 public:
  Dropout(Options& o, const std::string& name) : Layer(name) {
    rate_ = o.get<float>("rate");
    if (!(rate_ >= 0.0f && rate_ < 1.0f)) throw UsageError(who() + ": rate must be in [0, 1)");
    seed_ = o.get<uint64_t>("seed");
  }
  const char* kind() const override { return "Dropout"; }
  Rng* rng() override { return &rng_; }
  Shape build(std::span<const Shape> in, Rng& rng) override {
    // A fixed seed repeats the same masks; otherwise draw from the model's seed.
    rng_ = Rng(seed_ ? seed_ : rng.next());
    return output_shape_ = in[0];
  }
  // One key a step from the layer's generator, written where the layer runs
  // before the step; the mask is drawn from it there, the same bits on a GPU
  // as on the CPU, and a captured step reads each step's key.
  void begin_training_step() override {
    if (rate_ > 0.0f) draw_key();
    keyed_ = rate_ > 0.0f;
  }
  void forward(std::span<const Tensor* const> in, bool training) override {
    const Tensor& x = *in[0];
    training_ = training && rate_ > 0.0f;
    if (!training_) {
      out_ = x;  // identity: share the input's storage
      return;
    }
    ensure(out_, x.shape());
    ensure(mask_, x.shape());
    if (!keyed_) draw_key();  // no begin_training_step since the last forward
    keyed_ = false;
    kernels::dropout_forward(ex_, key_, 1.0f - rate_, x, mask_, out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    if (!training_) {
      dx_[0] = dy;
      return;
    }
    ensure(dx_[0], in[0]->shape());
    kernels::mul(ex_, dy, mask_, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    c["rate"] = rate_;
    if (seed_) c["seed"] = seed_;
    return c;
  }

 private:
  void draw_key() {
    ensure(key_, Shape{2}, DType::i32);
    kernels::dropout_set_key(ex_, rng_.next(), key_);
  }

  float rate_ = 0.5f;
  uint64_t seed_ = 0;
  bool training_ = false;
  bool keyed_ = false;  // begin_training_step wrote the next forward's key
  Rng rng_;
  Tensor key_;  // the step's key, two int32 on the layer's device
  Tensor mask_;
};
}  // namespace

const LayerInfo& dropout_layer() {
  static const LayerInfo info{
      .about = {.names = {"Dropout"},
                .doc = "in training, zeroes each value with probability rate (scaling the rest)",
                .schema = {{"rate", OptionType::number, kRequired,
                            "the fraction dropped, in [0, 1)"},
                           {"seed", OptionType::integer, 0,
                            "the masks' seed (0: drawn from the model's seed)"}},
                .positional = {"rate"}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<Dropout>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

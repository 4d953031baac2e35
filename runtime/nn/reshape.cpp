// Reshape: the same elements in a new per-example shape (Keras' target_shape,
// one -1 inferred). Output and input gradient are views: no copies.
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class Reshape final : public Layer {
 public:
  Reshape(Options& o, const std::string& name) : Layer(name) {
    const json& t = o.value("target_shape");
    if (!t.is_array() || t.empty() || t.size() >= Shape::kMaxRank)
      throw UsageError(who() + ": target_shape must be a list of 1 to " +
                       std::to_string(Shape::kMaxRank - 1) + " sizes, got " + t.dump());
    for (const json& d : t) {
      if (!d.is_number_integer() || (d.get<int64_t>() <= 0 && d.get<int64_t>() != -1))
        throw UsageError(who() + ": target_shape sizes must be positive or -1, got " + t.dump());
      target_.push_back(d.get<int64_t>());
    }
  }
  const char* kind() const override { return "Reshape"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    std::vector<int64_t> dims = target_;
    int64_t known = 1;
    int unknown = -1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] != -1) {
        known *= dims[i];
      } else if (unknown >= 0) {
        throw UsageError(who() + ": target_shape has more than one -1");
      } else {
        unknown = static_cast<int>(i);
      }
    }
    const int64_t n = in[0].numel();
    if (unknown >= 0 && known > 0 && n % known == 0) dims[static_cast<size_t>(unknown)] = n / known;
    const Shape out(dims);
    if (out.numel() != n || (unknown >= 0 && dims[static_cast<size_t>(unknown)] == -1))
      throw UsageError(who() + ": cannot reshape " + in[0].with_batch(0).str(true) + " (" +
                       std::to_string(n) + " values) to target_shape " + json(target_).dump());
    return output_shape_ = out;
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    out_ = in[0]->reshaped(output_shape_.with_batch(in[0]->dim(0)));
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (need_dx[0]) dx_[0] = dy.reshaped(in[0]->shape());
  }
  json config() const override {
    json c = Layer::config();
    c["target_shape"] = target_;
    return c;
  }

 private:
  std::vector<int64_t> target_;
};
}  // namespace

const LayerInfo& reshape_layer() {
  static const LayerInfo info{
      .about = {.names = {"Reshape"},
                .doc = "the same values in a new per-example shape (one size may be -1)",
                .schema = {{"target_shape", OptionType::list, kRequired,
                            "the per-example shape, e.g. {7, 7, 64}"}},
                .positional = {"target_shape"}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<Reshape>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

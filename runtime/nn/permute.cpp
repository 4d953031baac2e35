// Permute: reorders the per-example axes (Keras' dims, 1-based, the batch
// axis staying first), one strided copy each way.
#include "nn/copy_views.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class Permute final : public Layer {
 public:
  Permute(Options& o, const std::string& name) : Layer(name) {
    const json& d = o.value("dims");
    if (!d.is_array() || d.empty() || d.size() >= Shape::kMaxRank)
      throw UsageError(who() + ": dims must be a list of the axes 1..n, got " + d.dump());
    std::vector<bool> seen(d.size(), false);
    for (const json& a : d) {
      const int64_t axis = a.is_number_integer() ? a.get<int64_t>() : 0;
      if (axis < 1 || axis > static_cast<int64_t>(d.size()) || seen[static_cast<size_t>(axis - 1)])
        throw UsageError(who() + ": dims must order the axes 1.." + std::to_string(d.size()) +
                         " each once, got " + d.dump());
      seen[static_cast<size_t>(axis - 1)] = true;
      dims_.push_back(static_cast<int>(axis));
    }
  }
  const char* kind() const override { return "Permute"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    if (in[0].rank() != static_cast<int>(dims_.size()))
      throw UsageError(who() + ": dims " + json(dims_).dump() + " do not fit input shape " +
                       in[0].with_batch(0).str(true));
    std::vector<int64_t> out;
    for (int a : dims_) out.push_back(in[0][a - 1]);
    return output_shape_ = Shape(out);
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    ensure(out_, output_shape_.with_batch(x.dim(0)));
    kernels::strided_copy(ex_, geometry(x.shape(), false), x, 0.0f, out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    ensure(dx_[0], in[0]->shape());
    kernels::strided_copy(ex_, geometry(in[0]->shape(), true), dy, 0.0f, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    c["dims"] = dims_;
    return c;
  }

 private:
  // Over the output's elements: the input is read (forward) or written
  // (backward) through its strides in the output's axis order.
  kernels::CopyGeometry geometry(const Shape& in, bool backward) const {
    const Shape out = output_shape_.with_batch(in[0]);
    const Strides in_strides = row_major_strides(in);
    Strides permuted{};
    permuted[0] = in_strides[0];
    for (size_t k = 0; k < dims_.size(); ++k)
      permuted[k + 1] = in_strides[static_cast<size_t>(dims_[k])];
    const Strides out_strides = row_major_strides(out);
    return backward ? copy_geometry(out, out_strides, permuted)
                    : copy_geometry(out, permuted, out_strides);
  }
  std::vector<int> dims_;
};
}  // namespace

const LayerInfo& permute_layer() {
  static const LayerInfo info{
      .about = {.names = {"Permute"},
                .doc = "reorders the axes after the batch's (dims 1-based, e.g. {2, 1})",
                .schema = {{"dims", OptionType::list, kRequired, "the new order of the axes"}},
                .positional = {"dims"}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<Permute>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

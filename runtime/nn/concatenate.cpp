// Concatenate: joins inputs along one axis (Keras' default: the last), each
// input one strided copy into its slice of the output and back.
#include "nn/copy_views.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class Concatenate final : public Layer {
 public:
  Concatenate(Options& o, const std::string& name) : Layer(name), axis_(o.get<int64_t>("axis")) {}
  const char* kind() const override { return "Concatenate"; }
  int num_inputs() const override { return -1; }  // any number >= 2
  Shape build(std::span<const Shape> in, Rng&) override {
    if (in.size() < 2) throw UsageError(who() + ": needs at least two inputs");
    const int rank = in[0].rank() + 1;  // with the batch
    const int64_t a = axis_ < 0 ? axis_ + rank : axis_;
    if (a < 1 || a >= rank)
      throw UsageError(who() + ": axis " + std::to_string(axis_) + " is not an axis after the " +
                       "batch's of input shape " + in[0].with_batch(0).str(true));
    axis_in_example_ = static_cast<int>(a - 1);
    Shape out = in[0];
    out[axis_in_example_] = 0;
    for (const Shape& s : in) {
      bool fits = s.rank() == in[0].rank();
      for (int d = 0; fits && d < s.rank(); ++d) fits = d == axis_in_example_ || s[d] == in[0][d];
      if (!fits)
        throw UsageError(who() + ": input shapes " + in[0].with_batch(0).str(true) + " and " +
                         s.with_batch(0).str(true) + " differ outside axis " +
                         std::to_string(axis_));
      out[axis_in_example_] += s[axis_in_example_];
    }
    dx_.resize(in.size());
    return output_shape_ = out;
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    ensure(out_, output_shape_.with_batch(in[0]->dim(0)));
    int64_t offset = 0;
    for (const Tensor* x : in) {
      kernels::strided_copy(ex_, geometry(x->shape(), offset, false), *x, 0.0f, out_);
      offset += x->dim(axis_in_example_ + 1);
    }
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    int64_t offset = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      if (need_dx[i]) {
        ensure(dx_[i], in[i]->shape());
        kernels::strided_copy(ex_, geometry(in[i]->shape(), offset, true), dy, 0.0f, dx_[i]);
      }
      offset += in[i]->dim(axis_in_example_ + 1);
    }
  }
  json config() const override {
    json c = Layer::config();
    c["axis"] = axis_;
    return c;
  }

 private:
  // The input seen as (outer, along, inner) rows of the output's slice that
  // starts `offset` along the axis.
  kernels::CopyGeometry geometry(const Shape& x, int64_t offset, bool backward) const {
    const int axis = axis_in_example_ + 1;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x[d];
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x[d];
    const int64_t along = x[axis], out_along = output_shape_[axis_in_example_];
    const Shape size{outer, along * inner};
    const Strides part{along * inner, 1}, whole{out_along * inner, 1};
    return backward ? copy_geometry(size, whole, part, offset * inner, 0)
                    : copy_geometry(size, part, whole, 0, offset * inner);
  }
  int64_t axis_;
  int axis_in_example_ = 0;
};
}  // namespace

const LayerInfo& concatenate_layer() {
  static const LayerInfo info{
      .about = {.names = {"Concatenate"},
                .doc = "joins its inputs along an axis (default the last)",
                .schema = {{"axis", OptionType::integer, -1,
                            "the axis, counting the batch's as 0; negative from the end"}},
                .positional = {"axis"}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<Concatenate>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

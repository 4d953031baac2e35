// RepeatVector: (batch, features) -> (batch, n, features), the input read n
// times (a stride of 0); backward sums the n gradients.
#include "nn/copy_views.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class RepeatVector final : public Layer {
 public:
  RepeatVector(Options& o, const std::string& name) : Layer(name), n_(o.get<int64_t>("n")) {
    if (n_ < 1) throw UsageError(who() + ": n must be at least 1, got " + std::to_string(n_));
  }
  const char* kind() const override { return "RepeatVector"; }
  Shape build(std::span<const Shape> in, Rng&) override {
    expect_rank(in[0], 1, "vectors (batch, features)");
    return output_shape_ = Shape{n_, in[0][0]};
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    const int64_t b = in[0]->dim(0), f = in[0]->dim(1);
    ensure(out_, Shape{b, n_, f});
    const Shape size{b, n_, f};
    kernels::strided_copy(ex_, copy_geometry(size, {f, 0, 1}, row_major_strides(size)), *in[0],
                          0.0f, out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    if (!need_dx[0]) return;
    const int64_t b = in[0]->dim(0), f = in[0]->dim(1);
    ensure(dx_[0], in[0]->shape());
    auto g = copy_geometry(Shape{b, f}, {n_ * f, 1}, {f, 1});
    g.sum_rank = 1;
    g.sum_size[0] = n_;
    g.sum_stride[0] = f;
    kernels::strided_copy(ex_, g, dy, 0.0f, dx_[0]);
  }
  json config() const override {
    json c = Layer::config();
    c["n"] = n_;
    return c;
  }

 private:
  int64_t n_;
};
}  // namespace

const LayerInfo& repeat_vector_layer() {
  static const LayerInfo info{
      .about = {.names = {"RepeatVector"},
                .doc = "repeats a vector n times: (batch, f) to (batch, n, f)",
                .schema = {{"n", OptionType::integer, kRequired, "the number of repeats"}},
                .positional = {"n"}},
      .make = [](Options& o, const std::string& name) {
        return std::make_unique<RepeatVector>(o, name);
      }};
  return info;
}

}  // namespace drun::nn

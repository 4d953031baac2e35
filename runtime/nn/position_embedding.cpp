// PositionEmbedding (keras_hub's): a learned vector per position added to a
// (batch, steps, features) sequence, the transformer's token + position
// input. One strided copy adds the table to every example (a batch stride of
// 0); the table's gradient sums the examples' (one summed dimension).
#include "nn/copy_views.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {
class PositionEmbedding final : public Layer {
 public:
  PositionEmbedding(Options& o, const std::string& name)
      : Layer(name),
        length_(o.get<int64_t>("sequence_length")),
        init_(o.get<std::string>("initializer")) {
    if (length_ < 1) throw UsageError(who() + ": sequence_length must be at least 1");
  }
  const char* kind() const override { return "PositionEmbedding"; }
  Shape build(std::span<const Shape> in, Rng& rng) override {
    expect_rank(in[0], 2, "sequences (batch, steps, features)");
    if (in[0][0] > length_)
      throw UsageError(who() + ": " + std::to_string(in[0][0]) +
                       " steps are more than sequence_length " + std::to_string(length_));
    steps_ = in[0][0];
    features_ = in[0][1];
    Param& table = add_param("embeddings", Shape{length_, features_});
    initialize(table.value, init_, length_, features_, rng, who());
    return output_shape_ = in[0];
  }
  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    ensure(out_, x.shape());
    const int64_t b = x.dim(0), row = steps_ * features_;
    kernels::strided_copy(ex_, copy_geometry(Shape{b * row}, {1}, {1}), x, 0.0f, out_);
    kernels::strided_copy(ex_, copy_geometry(Shape{b, row}, {0, 1}, {row, 1}), params_[0].value,
                          1.0f, out_);
  }
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool> need_dx) override {
    const int64_t b = dy.dim(0), row = steps_ * features_;
    if (need_dx[0]) dx_[0] = dy;
    // The table's rows past the sequence's steps get no gradient.
    kernels::fill(ex_, 0.0f, params_[0].grad);
    auto g = copy_geometry(Shape{row}, {1}, {1});
    g.sum_rank = 1;
    g.sum_size[0] = b;
    g.sum_stride[0] = row;
    kernels::strided_copy(ex_, g, dy, 0.0f, params_[0].grad);
    (void)in;
  }
  json config() const override {
    json c = Layer::config();
    c["sequence_length"] = length_;
    return c;
  }

 private:
  int64_t length_, steps_ = 0, features_ = 0;
  std::string init_;
};
}  // namespace

const LayerInfo& position_embedding_layer() {
  static const LayerInfo info{
      .about = {.names = {"PositionEmbedding"},
                .doc = "adds a learned vector per position to (batch, steps, features) "
                       "(keras_hub's; not in Keras itself)",
                .schema = {{"sequence_length", OptionType::integer, kRequired,
                            "the most steps a sequence has"},
                           {"initializer", OptionType::string, "glorot_uniform",
                            "the table's initial values"}},
                .positional = {"sequence_length"}},
      .make = [](Options& o,
                 const std::string& name) { return std::make_unique<PositionEmbedding>(o, name); },
      // keras_hub writes the initializer as a Keras object; it only matters
      // before the weights are read.
      .from_keras = [](json& config, const std::string&) { config.erase("initializer"); }};
  return info;
}

}  // namespace drun::nn

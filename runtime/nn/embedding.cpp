// Embedding: (batch, time) token ids -> (batch, time, output_dim), each id
// picking a row of the (input_dim, output_dim) table `embeddings`. The ids
// arrive in the float32 tensors drun's data sets give (exact integers below
// 2^24), or as int32. They have no gradient: the model asks none of this
// layer (Layer::takes_ids); its backward sums dy's rows into the table's.
//
// An id outside [0, input_dim) is a UsageError naming it. Where the ids are
// on the host the layer checks them itself before the lookup; on a GPU the
// model checks the host batch before it is staged (Model::check_input):
// reading a flag back from the device instead would make every step wait
// for the GPU and could not be captured in a CUDA graph, while the host scan
// costs a pass over batch x time floats. The kernels themselves never read
// outside the table for a bad id (kernels/embedding.hpp).
#include "kernels/embedding.hpp"

#include <fmt/format.h>

#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace drun::nn {

namespace {

class Embedding final : public Layer {
 public:
  Embedding(Options& o, const std::string& name) : Layer(name) {
    input_dim_ = o.get<int64_t>("input_dim");
    output_dim_ = o.get<int64_t>("output_dim");
    if (input_dim_ <= 0 || output_dim_ <= 0)
      throw UsageError(who() + ": input_dim and output_dim must be positive, got " +
                       std::to_string(input_dim_) + " and " + std::to_string(output_dim_));
    if (o.get<bool>("mask_zero"))
      throw UsageError(who() + ": mask_zero = true is not supported (drun has no masks)");
    init_ = o.get<std::string>("embeddings_initializer");
    input_length_ = o.value("input_length");
  }
  const char* kind() const override { return "Embedding"; }
  bool takes_ids() const override { return true; }

  Shape build(std::span<const Shape> in, Rng& rng) override {
    const Shape& s = in[0];
    if (s.rank() < 1 || s.rank() >= Shape::kMaxRank)
      throw UsageError(who() + ": expects token ids (batch, time), got input shape " +
                       s.with_batch(0).str(true));
    // Keras 2's input_length: the sequence length (or the lengths), checked.
    if (!input_length_.is_null()) {
      const json want = s.rank() == 1 ? json(s[0]) : json(s.dims());
      const json given = input_length_.is_array() && input_length_.size() == 1 && s.rank() == 1
                             ? input_length_[0]
                             : input_length_;
      if (given != want)
        throw UsageError(who() + ": input_length " + input_length_.dump() +
                         " does not match the input shape " + s.with_batch(0).str(true));
    }
    Param& table = add_param("embeddings", Shape{input_dim_, output_dim_});
    initialize(table.value, init_, input_dim_, output_dim_, rng, who());
    std::vector<int64_t> dims = s.dims();
    dims.push_back(output_dim_);
    return output_shape_ = Shape(dims);
  }

  void check_input(const Tensor& ids) const override {
    const int64_t n = ids.numel();
    if (ids.dtype() == DType::i32) {
      for (int64_t i = 0; i < n; ++i)
        if (!kernels::embedding_id_valid(ids.i32()[i], input_dim_))
          bad_id(std::to_string(ids.i32()[i]), ids, i);
      return;
    }
    if (ids.dtype() != DType::f32)
      throw UsageError(who() + ": takes token ids as float32 or int32, got " +
                       dtype_name(ids.dtype()));
    for (int64_t i = 0; i < n; ++i)
      if (!kernels::embedding_id_valid(ids.f32()[i], input_dim_))
        bad_id(fmt::format("{:g}", ids.f32()[i]), ids, i);
  }

  void forward(std::span<const Tensor* const> in, bool) override {
    const Tensor& x = *in[0];
    if (x.device() == Device::cpu) check_input(x);
    std::vector<int64_t> dims = x.shape().dims();
    dims.push_back(output_dim_);
    ensure(out_, Shape(dims));
    kernels::embedding_gather(ex_, x, params_[0].value, out_);
  }

  // need_dx is never set by the model (takes_ids); the ids have no gradient.
  void backward(std::span<const Tensor* const> in, const Tensor& dy,
                std::span<const bool>) override {
    kernels::embedding_scatter_add(ex_, *in[0], dy, params_[0].grad);
  }

  json config() const override {
    json c = Layer::config();
    c["input_dim"] = input_dim_;
    c["output_dim"] = output_dim_;
    c["embeddings_initializer"] = {
        {"class_name", "RandomUniform"},
        {"config", {{"minval", -0.05}, {"maxval", 0.05}, {"seed", nullptr}}}};
    c["mask_zero"] = false;
    return c;
  }

 private:
  [[noreturn]] void bad_id(const std::string& id, const Tensor& ids, int64_t at) const {
    const int64_t per_example = ids.dim(0) ? ids.numel() / ids.dim(0) : 1;
    throw UsageError(who() + ": token id " + id + " (example " + std::to_string(at / per_example) +
                     " of the batch, position " + std::to_string(at % per_example) +
                     ") is outside [0, " + std::to_string(input_dim_) + "), the input_dim");
  }

  int64_t input_dim_ = 0, output_dim_ = 0;
  std::string init_;
  json input_length_;
};

}  // namespace

const LayerInfo& embedding_layer() {
  static const LayerInfo info{
      .about = {.names = {"Embedding"},
                .doc =
                    "token ids (batch, time) to rows of a learnt table (batch, time, output_dim)",
                .schema = {{"input_dim", OptionType::integer, kRequired,
                            "the vocabulary: ids lie in [0, input_dim)"},
                           {"output_dim", OptionType::integer, kRequired, "each row's length"},
                           {"embeddings_initializer", OptionType::string, "uniform",
                            "the table's initial values"},
                           {"mask_zero", OptionType::boolean, false, "only false (no masks)"},
                           {"input_length", OptionType::any, nullptr,
                            "Keras 2's sequence length, checked against the input shape"}},
                .positional = {"input_dim", "output_dim"}},
      .make = [](Options& o,
                 const std::string& name) { return std::make_unique<Embedding>(o, name); },
      .takes_ids = true};
  return info;
}

}  // namespace drun::nn

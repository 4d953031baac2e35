#include "nn/layer.hpp"

namespace drun::nn {

json Layer::config() const {
  return {{"name", name_}, {"trainable", true}, {"dtype", "float32"}};
}

int64_t Layer::param_count() const {
  int64_t n = 0;
  for (const auto& p : params_) n += p.value.numel();
  return n;
}

void Layer::set_exec(const Exec& ex) {
  ex_ = ex;
  for (Param& p : params_) {
    p.value = p.value.to(ex.device);
    if (p.grad.defined()) p.grad = p.grad.to(ex.device);
  }
}

Param& Layer::add_param(const std::string& short_name, const Shape& shape, bool trainable) {
  Param p;
  p.name = name_ + "/" + short_name;
  p.value = Tensor::zeros(shape);
  if (trainable) p.grad = Tensor::zeros(shape);
  p.trainable = trainable;
  params_.push_back(std::move(p));
  return params_.back();
}

const Tensor& Layer::extra_output(int k) const {
  throw UsageError(who() + ": has one output, not " + std::to_string(k + 1));
}

Shape Layer::extra_output_shape(int k) const {
  throw UsageError(who() + ": has one output, not " + std::to_string(k + 1));
}

void Layer::expect_rank(const Shape& in, int rank, const char* what) const {
  if (in.rank() != rank)
    throw UsageError(who() + ": expects " + what + " (rank " + std::to_string(rank + 1) +
                     " with the batch), got input shape " + in.with_batch(0).str(true));
}

Layer::Spatial Layer::expect_spatial(const Shape& in, bool one_d) const {
  if (one_d) {
    expect_rank(in, 2, "sequences (batch, steps, channels)");
    return {1, in[0], in[1]};
  }
  expect_rank(in, 3, "images (batch, height, width, channels)");
  return {in[0], in[1], in[2]};
}

void Layer::expect_same_shapes(std::span<const Shape> in) const {
  if (in.size() < 2) throw UsageError(who() + ": needs at least two inputs");
  for (const auto& s : in)
    if (s != in[0])
      throw UsageError(who() + ": input shapes differ: " + in[0].with_batch(0).str(true) + " and " +
                       s.with_batch(0).str(true));
}

}  // namespace drun::nn

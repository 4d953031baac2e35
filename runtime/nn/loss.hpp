// Loss: a Keras loss by class name, computed together with its gradient with
// respect to the model's output (one fused kernel per loss).
#pragma once
#include <string>

#include "base/options.hpp"
#include "kernels/ops.hpp"

namespace drun::nn {

class Loss {
 public:
  // spec: "sparse_categorical_crossentropy" or
  // {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}.
  explicit Loss(const json& spec);
  // Throws a UsageError naming what is wrong where the targets (on the host)
  // do not fit the predictions: their shape or type, or a label outside the
  // classes (with its example). Call it before compute, which checks nothing.
  void check(const Shape& pred, const Tensor& target) const;
  // loss (one float32 on pred's device) = the batch's mean loss; grad (shaped
  // like pred) = d(loss)/d(pred). On a GPU nothing waits for the loss here.
  void compute(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& grad,
               Tensor& loss);
  const std::string& class_name() const { return class_name_; }
  bool from_logits() const { return from_logits_; }
  bool sparse() const;
  json config() const;

 private:
  std::string class_name_;
  bool from_logits_ = false;
  kernels::LossKind kind_;
};

}  // namespace drun::nn

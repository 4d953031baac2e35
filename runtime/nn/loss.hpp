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
  // Mean loss of the batch; grad (shaped like pred) receives d(loss)/d(pred).
  double compute(const kernels::Exec& ex, const Tensor& pred, const Tensor& target, Tensor& grad);
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

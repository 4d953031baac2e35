// Loss: a Keras loss by class name, computed together with its gradient with
// respect to the model's output (one fused kernel per loss). The losses, their
// names and options are the loss registry's (nn/loss_list.hpp).
#pragma once
#include <string>
#include <vector>

#include "base/options.hpp"
#include "base/registry.hpp"
#include "kernels/ops.hpp"

namespace drun::nn {

// A loss: its names (the Keras class first, then Keras' snake_case names),
// its options (those every loss takes) and the kernels it runs.
struct LossInfo {
  Described about;
  kernels::LossKind on_probabilities;  // the kernel for from_logits = false
  kernels::LossKind on_logits;         // and for true, where takes_logits
  bool takes_logits = true;            // whether from_logits = true means anything
  bool sparse = false;                 // targets are integer class labels
};

#define DRUN_LOSS(id) const LossInfo& id##_loss();
#include "nn/loss_list.hpp"
#undef DRUN_LOSS

// Every loss, in the list's order, with the options every loss takes.
const std::vector<const LossInfo*>& loss_registry();

class Loss {
 public:
  // spec: a name of the registry ("sparse_categorical_crossentropy", "mse",
  // "MeanSquaredError"...) or Keras' serialisation with a class name,
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
  bool sparse() const { return info_->sparse; }
  float label_smoothing() const { return label_smoothing_; }
  json config() const;

 private:
  const LossInfo* info_ = nullptr;
  std::string class_name_;
  bool from_logits_ = false;
  kernels::LossKind kind_;
  float label_smoothing_ = 0.f;
  double smoothing_given_ = 0;  // as the user wrote it, for config()
  // Where label smoothing needs them: the smoothed (or uniform) targets, and
  // for sparse labels the second loss and its gradient.
  Tensor smoothed_, other_grad_, other_loss_;
};

}  // namespace drun::nn

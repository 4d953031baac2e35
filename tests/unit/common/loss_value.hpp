// nn::Loss::compute leaves the loss on the prediction's device; the tests
// want it as a number.
#pragma once
#include "nn/loss.hpp"

namespace drun::testing {

inline double loss_value(nn::Loss& loss, const kernels::Exec& ex, const Tensor& pred,
                         const Tensor& target, Tensor& grad) {
  Tensor value(Shape{1}, DType::f32, pred.device());
  loss.compute(ex, pred, target, grad, value);
  return value.to(Device::cpu).f32()[0];
}

}  // namespace drun::testing

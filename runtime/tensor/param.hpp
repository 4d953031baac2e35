// Param: a trainable (or tracked, like batch-norm moving statistics) variable
// and the gradient that the last backward pass wrote for it.
#pragma once
#include <string>

#include "tensor/tensor.hpp"

namespace drun {

struct Param {
  std::string name;  // Keras weight name, e.g. "conv2d/kernel"
  Tensor value;
  Tensor grad;  // undefined for non-trainable variables
  bool trainable = true;
};

}  // namespace drun

// Batch: one step's worth of examples. Its tensors are reused from step to step
// (Tensor::ensure), so a warm pipeline allocates nothing.
#pragma once
#include <cstdint>

#include "tensor/tensor.hpp"

namespace drun::data {

struct Batch {
  Tensor x;          // float32 (size, ...)
  Tensor y;          // int32 (size) or float32 (size, k)
  int64_t size = 0;  // examples in this batch; the last of an epoch may be short
};

}  // namespace drun::data

// Dataset: a whole data set held in memory as two tensors, the inputs x and the
// targets y, with one row per example. Readers produce it; a Pipeline shares it
// (read-only) between the training loop and its prefetch thread.
#pragma once
#include <cstdint>
#include <string>

#include "tensor/tensor.hpp"

namespace drun::data {

struct Dataset {
  // float32 (N, ...), e.g. (N, 28, 28, 1) for images, or uint8 as read from
  // the file (pixels: a quarter of the memory), converted per batch.
  Tensor x;
  Tensor y;  // int32 (N) class ids, or float32 (N, k) regression / one-hot targets
  // Holds only this worker's part of a larger set (e.g. CIFAR-10 read with
  // shard = true): the training input is not sharded again.
  bool sharded = false;

  int64_t size() const { return x.defined() && x.rank() > 0 ? x.dim(0) : 0; }
};

// Throws UsageError (prefixed by `what`) unless x and y have the types and
// shapes above and the same number of rows.
void check_dataset(const Dataset& d, const std::string& what);

}  // namespace drun::data

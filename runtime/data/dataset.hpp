// Dataset: a data set as two tensors, the inputs x and the targets y, with one
// row per example, or as y and a source that makes each example's x when a
// batch needs it (image folders: only the file list is in memory), or as y and
// files whose rows a pipeline streams (data.hdf5 streamed). Readers
// produce it; a Pipeline shares it (read-only) between the training loop and
// its prefetch thread.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "base/schema.hpp"
#include "data/example_source.hpp"
#include "data/row_source.hpp"
#include "tensor/tensor.hpp"

namespace drun::data {

struct Dataset {
  // float32 (N, ...), e.g. (N, 28, 28, 1) for images, or uint8 as read from
  // the file (pixels: a quarter of the memory), converted per batch; empty
  // with a source or rows.
  Tensor x;
  Tensor y;  // int32 (N) class ids, or float32 (N, k) regression / one-hot targets
  std::shared_ptr<const ExampleSource> source;  // makes x per batch instead
  std::shared_ptr<const RowSource> rows;        // or streams x from files instead
  // Holds only this worker's part of a larger set (e.g. CIFAR-10 read with
  // shard = true): the training input is not sharded again.
  bool sharded = false;
  // What the reader reports about its data beyond the tensors, for scripts
  // (ds:info()): text's vocabulary_size and vocabulary. An object, maybe empty.
  json info = json::object();

  int64_t size() const;
  // One example's x shape, e.g. (28, 28, 1).
  Shape example_shape() const;
};

// Throws UsageError (prefixed by `what`) unless x (or the source) and y have
// the types and shapes above and the same number of rows.
void check_dataset(const Dataset& d, const std::string& what);

// A reader's y as a Dataset holds it: int32 class ids (N) where y is int32
// with one value per example (N or (N, 1)), each checked >= 0; else float32
// targets (N, k), a rank-1 y becoming (N, 1). `where` (the file, the array)
// prefixes every message.
Tensor labels_or_targets(const Tensor& y, const std::string& where);

}  // namespace drun::data

// Named float tensors in an HDF5 file: one dataset per tensor, a '/' in a
// name making groups ("conv2d/kernel" is dataset "kernel" in group "conv2d").
// Parameter servers write their shards with it; h5py and h5dump read them.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/options.hpp"
#include "tensor/tensor.hpp"

namespace drun::io {

// Writes atomically: a temporary file beside `path`, fsync, rename. Throws
// UsageError naming the path when it cannot.
// `attributes`, when not null, goes into the root attribute "drun" as JSON
// text (for counters and states that are not tensors).
void write_tensors(const std::string& path,
                   const std::vector<std::pair<std::string, Tensor>>& tensors,
                   const json& attributes = nullptr);

struct TensorFile {
  std::map<std::string, Tensor> tensors;  // every float dataset by full name (no leading '/')
  json attributes;                        // the "drun" root attribute; null when absent
};
// Throws UsageError naming the path for a missing, non-HDF5, truncated or
// corrupt file.
TensorFile read_tensor_file(const std::string& path);

}  // namespace drun::io

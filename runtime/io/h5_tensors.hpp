// Named float tensors in an HDF5 file: one dataset per tensor, a '/' in a
// name making groups ("conv2d/kernel" is dataset "kernel" in group "conv2d").
// Parameter servers write their shards with it; h5py and h5dump read them.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.hpp"

namespace drun::io {

// Writes atomically: a temporary file beside `path`, fsync, rename. Throws
// UsageError naming the path when it cannot.
void write_tensors(const std::string& path,
                   const std::vector<std::pair<std::string, Tensor>>& tensors);

// Every float dataset of the file by its full name (no leading '/'). Throws
// UsageError naming the path for a missing or non-HDF5 file.
std::map<std::string, Tensor> read_tensors(const std::string& path);

}  // namespace drun::io

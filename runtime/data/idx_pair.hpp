// A data set from any pair of idx files (images or other arrays, and labels),
// as users' own MNIST-style data come: the two files' example counts must
// agree and the labels must be class ids (>= 0). Fashion-MNIST is one such pair.
#pragma once
#include <string>

#include "data/dataset.hpp"

namespace drun::data {

// x from `images` (rank 3 (N, H, W) becomes (N, H, W, 1); rank 4 is kept),
// raw values as float32; y int32 (N) from `labels`. `what` prefixes every
// message (e.g. "data.idx"); each names the file at fault.
Dataset load_idx_pair(const std::string& images, const std::string& labels,
                      const std::string& what);

}  // namespace drun::data

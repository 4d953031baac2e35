// drun.data.numpy: x and y from .npy files, or from members of one .npz file
// (numpy_file.hpp reads them), checked to agree.
#pragma once
#include <string>

#include "data/dataset.hpp"

namespace drun::data {

struct NumpySource {
  std::string npz;  // the .npz file, or empty: x and y are .npy paths
  std::string x, y;
};

// x float32 (N, ...) (rank 1 becomes (N, 1)); y int32 (N) class ids when its
// type is integer or boolean and it has one value per example, else float32
// (N, k) targets.
Dataset load_numpy(const NumpySource& source);

}  // namespace drun::data

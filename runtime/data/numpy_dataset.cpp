#include "data/numpy_dataset.hpp"

#include "base/options.hpp"
#include "data/numpy_file.hpp"

namespace drun::data {
namespace {

std::string name_of(const NumpySource& s, const std::string& array) {
  return s.npz.empty() ? array : s.npz + " member '" + array + "'";
}

Tensor read(const NumpySource& s, const std::string& array, NumpyAs as) {
  return s.npz.empty() ? read_numpy_array(array, "", as) : read_numpy_array(s.npz, array, as);
}

}  // namespace

Dataset load_numpy(const NumpySource& s) {
  Dataset d;
  d.x = read(s, s.x, NumpyAs::pixels);
  if (d.x.rank() == 0)
    throw UsageError("data.numpy: " + name_of(s, s.x) +
                     " is a single number, not an array of "
                     "examples");
  if (d.x.rank() == 1) d.x = d.x.reshaped({d.x.dim(0), 1});
  // Class ids where y's type is an integer one and it has one per example;
  // its type decides, so a float file of whole numbers stays a float target.
  Tensor y = read(s, s.y, NumpyAs::class_ids);
  if (y.dtype() == DType::i32 && (y.rank() == 1 || (y.rank() == 2 && y.dim(1) == 1))) {
    d.y = y.reshaped({y.dim(0)});
    const int32_t* ids = d.y.i32();
    for (int64_t i = 0; i < d.y.dim(0); ++i)
      if (ids[i] < 0)
        throw UsageError("data.numpy: " + name_of(s, s.y) + ": label " + std::to_string(ids[i]) +
                         " of example " + std::to_string(i) +
                         " is negative (labels are class ids 0, 1, ...)");
  } else {
    if (y.dtype() == DType::i32)
      y = read(s, s.y, NumpyAs::floats);  // integer targets of several columns
    if (y.rank() == 0) throw UsageError("data.numpy: " + name_of(s, s.y) + " is a single number");
    if (y.rank() == 1) y = y.reshaped({y.dim(0), 1});
    if (y.rank() != 2)
      throw UsageError("data.numpy: " + name_of(s, s.y) + " has shape " + y.shape().str() +
                       "; targets are class ids (N) or rows of numbers (N, k)");
    d.y = y;
  }
  if (d.x.dim(0) != d.y.dim(0))
    throw UsageError("data.numpy: " + name_of(s, s.x) + " holds " + std::to_string(d.x.dim(0)) +
                     " examples but " + name_of(s, s.y) + " holds " + std::to_string(d.y.dim(0)));
  return d;
}

}  // namespace drun::data

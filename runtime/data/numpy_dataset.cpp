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
    throw UsageError("data.numpy: " + name_of(s, s.x) + " is a single number, not one per example");
  if (d.x.rank() == 1) d.x = d.x.reshaped({d.x.dim(0), 1});
  // y's type decides: a float file of whole numbers stays a float target.
  d.y = labels_or_targets(read(s, s.y, NumpyAs::class_ids), "data.numpy: " + name_of(s, s.y));
  if (d.x.dim(0) != d.y.dim(0))
    throw UsageError("data.numpy: " + name_of(s, s.x) + " holds " + std::to_string(d.x.dim(0)) +
                     " examples but " + name_of(s, s.y) + " holds " + std::to_string(d.y.dim(0)));
  return d;
}

}  // namespace drun::data

// Checks that a Dataset has the layout every consumer of it assumes.
#include "data/dataset.hpp"

#include "base/options.hpp"

namespace drun::data {

int64_t Dataset::size() const {
  if (source) return source->size();
  return x.defined() && x.rank() > 0 ? x.dim(0) : 0;
}

Shape Dataset::example_shape() const {
  return source ? source->example_shape() : x.shape().drop_batch();
}

void check_dataset(const Dataset& d, const std::string& what) {
  if (d.source) {
    if (!d.y.defined() || d.y.dtype() != DType::i32 || d.y.rank() != 1 ||
        d.y.dim(0) != d.source->size())
      throw UsageError(what + ": a data set with a source needs int32 y, one per example");
    return;
  }
  if (!d.x.defined() || !d.y.defined()) throw UsageError(what + ": data set has no x or no y");
  if ((d.x.dtype() != DType::f32 && d.x.dtype() != DType::u8) || d.x.rank() < 1)
    throw UsageError(what + ": x must be float32 or uint8 of shape (N, ...), got " +
                     dtype_name(d.x.dtype()) + " " + d.x.shape().str());
  bool class_ids = d.y.dtype() == DType::i32 && d.y.rank() == 1;
  bool targets = d.y.dtype() == DType::f32 && d.y.rank() >= 1;
  if (!class_ids && !targets)
    throw UsageError(what + ": y must be int32 (N) or float32 (N, k), got " +
                     dtype_name(d.y.dtype()) + " " + d.y.shape().str());
  if (d.y.dim(0) != d.x.dim(0))
    throw UsageError(what + ": x has " + std::to_string(d.x.dim(0)) + " examples but y has " +
                     std::to_string(d.y.dim(0)));
}

}  // namespace drun::data

// Checks that a Dataset has the layout every consumer of it assumes.
#include "data/dataset.hpp"

#include "base/options.hpp"

namespace drun::data {

int64_t Dataset::size() const {
  if (source) return source->size();
  if (rows) return rows->size();
  return x.defined() && x.rank() > 0 ? x.dim(0) : 0;
}

Shape Dataset::example_shape() const {
  if (rows) return rows->example_shape();
  return source ? source->example_shape() : x.shape().drop_batch();
}

void check_dataset(const Dataset& d, const std::string& what) {
  if (d.source) {
    if (!d.y.defined() || d.y.dtype() != DType::i32 || d.y.rank() != 1 ||
        d.y.dim(0) != d.source->size())
      throw UsageError(what + ": a data set with a source needs int32 y, one per example");
    return;
  }
  if (d.rows) {
    if (!d.y.defined() || d.y.rank() < 1 || d.y.dim(0) != d.rows->size() ||
        (d.rows->dtype() != DType::u8 && d.rows->dtype() != DType::f32))
      throw UsageError(what + ": streamed rows need uint8 or float32 x and one y per example");
    return;
  }
  if (!d.x.defined() || !d.y.defined()) throw UsageError(what + ": data set has no x or no y");
  if ((d.x.dtype() != DType::f32 && d.x.dtype() != DType::u8) || d.x.rank() < 1)
    throw UsageError(what + ": x must be float32 or uint8 of shape (N, ...), got " +
                     dtype_name(d.x.dtype()) + " " + d.x.shape().str());
  // int32 (N, T): a class id per step of a sequence (data.text).
  bool class_ids = d.y.dtype() == DType::i32 && d.y.rank() >= 1;
  bool targets = d.y.dtype() == DType::f32 && d.y.rank() >= 1;
  if (!class_ids && !targets)
    throw UsageError(what + ": y must be int32 (N) or (N, T) class ids or float32 (N, k), got " +
                     dtype_name(d.y.dtype()) + " " + d.y.shape().str());
  if (d.y.dim(0) != d.x.dim(0))
    throw UsageError(what + ": x has " + std::to_string(d.x.dim(0)) + " examples but y has " +
                     std::to_string(d.y.dim(0)));
}

Tensor labels_or_targets(const Tensor& y, const std::string& where) {
  if (y.rank() == 0) throw UsageError(where + " is a single number, not one per example");
  if (y.dtype() == DType::i32 && (y.rank() == 1 || (y.rank() == 2 && y.dim(1) == 1))) {
    Tensor ids = y.reshaped({y.dim(0)});
    for (int64_t i = 0; i < ids.dim(0); ++i)
      if (ids.i32()[i] < 0)
        throw UsageError(where + ": label " + std::to_string(ids.i32()[i]) + " of example " +
                         std::to_string(i) + " is negative (labels are class ids 0, 1, ...)");
    return ids;
  }
  Tensor targets = y;
  if (y.dtype() != DType::f32) {  // integer targets of several columns
    targets = Tensor(y.shape());
    for (int64_t i = 0; i < y.numel(); ++i) targets.f32()[i] = static_cast<float>(y.i32()[i]);
  }
  if (targets.rank() == 1) targets = targets.reshaped({targets.dim(0), 1});
  if (targets.rank() != 2)
    throw UsageError(where + " has shape " + targets.shape().str() +
                     "; targets are class ids (N) or rows of numbers (N, k)");
  return targets;
}

}  // namespace drun::data

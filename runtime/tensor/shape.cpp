#include "tensor/shape.hpp"

#include <stdexcept>

namespace drun {

namespace {
// Checks and copies dims into the inline array; allocates nothing (layers
// build shapes from braced lists in every forward pass).
template <typename Dims>
int assign_dims(const Dims& dims, std::array<int64_t, Shape::kMaxRank>& out) {
  if (dims.size() > Shape::kMaxRank)
    throw std::invalid_argument("shape of rank " + std::to_string(dims.size()) +
                                " exceeds the maximum rank " + std::to_string(Shape::kMaxRank));
  size_t i = 0;
  for (int64_t d : dims) {
    if (d < 0) throw std::invalid_argument("negative dimension in shape");
    out[i++] = d;
  }
  return static_cast<int>(dims.size());
}
}  // namespace

Shape::Shape(std::initializer_list<int64_t> dims) : rank_(assign_dims(dims, dims_)) {}

Shape::Shape(const std::vector<int64_t>& dims) : rank_(assign_dims(dims, dims_)) {}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<size_t>(i)];
  return n;
}

int64_t Shape::inner() const {
  int64_t n = 1;
  for (int i = 1; i < rank_; ++i) n *= dims_[static_cast<size_t>(i)];
  return n;
}

Shape Shape::with_batch(int64_t n) const {
  if (rank_ == kMaxRank) throw std::invalid_argument("shape rank too large to add a batch");
  Shape s;
  s.rank_ = rank_ + 1;
  s.dims_[0] = n;
  for (int i = 0; i < rank_; ++i)
    s.dims_[static_cast<size_t>(i + 1)] = dims_[static_cast<size_t>(i)];
  return s;
}

Shape Shape::drop_batch() const {
  Shape s;
  if (rank_ == 0) return s;
  s.rank_ = rank_ - 1;
  for (int i = 1; i < rank_; ++i)
    s.dims_[static_cast<size_t>(i - 1)] = dims_[static_cast<size_t>(i)];
  return s;
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[static_cast<size_t>(i)] != o.dims_[static_cast<size_t>(i)]) return false;
  return true;
}

std::string Shape::str(bool batch_free) const {
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += (i == 0 && batch_free) ? std::string("None")
                                : std::to_string(dims_[static_cast<size_t>(i)]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

}  // namespace drun

// Shape: up to kMaxRank dimensions held inline, so copying a shape never allocates.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace drun {

class Shape {
 public:
  static constexpr int kMaxRank = 6;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i < 0 ? i + rank_ : i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i < 0 ? i + rank_ : i)]; }
  int64_t numel() const;
  // Elements per leading index: numel() / dims[0].
  int64_t inner() const;
  std::vector<int64_t> dims() const { return {dims_.begin(), dims_.begin() + rank_}; }
  // This shape with a new leading (batch) dimension.
  Shape with_batch(int64_t n) const;
  // This shape without its leading dimension.
  Shape drop_batch() const;

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // "(64, 26, 26, 32)"; batch_free prints the first dimension as None, as Keras does.
  std::string str(bool batch_free = false) const;

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

}  // namespace drun

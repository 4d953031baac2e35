// The strided views of the shape layers' copies (kernels' strided_copy):
// row-major strides of a shape and the geometry of a copy between two views.
#pragma once
#include <array>
#include <cstdint>

#include "kernels/types.hpp"
#include "tensor/shape.hpp"

namespace drun::nn {

using Strides = std::array<int64_t, Shape::kMaxRank>;

inline Strides row_major_strides(const Shape& s) {
  Strides st{};
  int64_t step = 1;
  for (int d = s.rank() - 1; d >= 0; --d) {
    st[static_cast<size_t>(d)] = step;
    step *= s[d];
  }
  return st;
}

// A copy over `size`'s elements, read from x and written to y with these
// strides and offsets (elements); summed dimensions are added by the caller.
inline kernels::CopyGeometry copy_geometry(const Shape& size, const Strides& x_stride,
                                           const Strides& y_stride, int64_t x_offset = 0,
                                           int64_t y_offset = 0) {
  kernels::CopyGeometry g;
  g.rank = size.rank();
  for (int d = 0; d < size.rank(); ++d) {
    g.size[d] = size[d];
    g.x_stride[d] = x_stride[static_cast<size_t>(d)];
    g.y_stride[d] = y_stride[static_cast<size_t>(d)];
  }
  g.x_offset = x_offset;
  g.y_offset = y_offset;
  return g;
}

// y (cols, rows) = x (rows, cols) transposed, walked along y's rows.
inline kernels::CopyGeometry transpose_geometry(int64_t rows, int64_t cols) {
  return copy_geometry(Shape{cols, rows}, Strides{1, cols}, Strides{rows, 1});
}

}  // namespace drun::nn

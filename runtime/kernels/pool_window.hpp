// The window arithmetic of pooling, written once for the CPU's loops and the
// CUDA kernels: which input pixels a window covers, how many of them lie in
// the image (average pooling's divisor), and which windows cover an input
// pixel (the GPU's gathering backward passes). Every loop over a window walks
// its span in increasing order, so sums and first maxima agree to the bit.
#pragma once
#include <cstdint>

#include "kernels/host_device.hpp"
#include "kernels/types.hpp"

namespace drun::kernels {

// Coordinates [begin, end) along one axis.
struct WindowSpan {
  int64_t begin, end;
};

// The input coordinates that window `o` covers along an axis of `extent`
// pixels, clipped to the image: windows start at o * stride - pad.
DRUN_HOST_DEVICE inline WindowSpan window_inputs(int64_t o, int64_t stride, int64_t pad,
                                                 int64_t size, int64_t extent) {
  const int64_t start = o * stride - pad;
  return {start > 0 ? start : 0, start + size < extent ? start + size : extent};
}

DRUN_HOST_DEVICE inline WindowSpan window_rows(const PoolGeometry& g, int64_t oy) {
  return window_inputs(oy, g.sh, g.pad_top, g.ph, g.h);
}

DRUN_HOST_DEVICE inline WindowSpan window_cols(const PoolGeometry& g, int64_t ox) {
  return window_inputs(ox, g.sw, g.pad_left, g.pw, g.w);
}

// The windows along an axis (of `out` windows) that contain input coordinate i.
DRUN_HOST_DEVICE inline WindowSpan windows_over(int64_t i, int64_t stride, int64_t pad,
                                                int64_t size, int64_t out) {
  const int64_t t = i + pad;  // >= 0: the position in padded coordinates
  const int64_t first = t >= size ? (t - size) / stride + 1 : 0;
  const int64_t last = t / stride < out - 1 ? t / stride : out - 1;
  return {first, last + 1};
}

// The pixels of window (oy, ox) inside the image, at least 1: average
// pooling divides by these (Keras' 'same' padding counts no padded pixel).
DRUN_HOST_DEVICE inline int64_t window_count(const PoolGeometry& g, int64_t oy, int64_t ox) {
  const WindowSpan ys = window_rows(g, oy), xs = window_cols(g, ox);
  const int64_t count = (ys.end - ys.begin) * (xs.end - xs.begin);
  return count > 1 ? count : 1;
}

}  // namespace drun::kernels

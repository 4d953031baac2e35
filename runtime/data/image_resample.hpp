// Resampling a box of an RGB picture to a given size with PIL's bilinear
// filter (antialiased: when shrinking, the triangle widens with the scale), the
// filter torchvision's Resize and RandomResizedCrop use on PIL images. Sampling
// positions follow PIL's resize(size, box=...) exactly, so a box taken from a
// resized picture's crop gives that crop (within rounding: PIL rounds to 8
// bits after each pass; this stays in float).
#pragma once
#include <cstdint>

namespace drun::data {

// Rows of 3-byte RGB pixels, `stride` bytes apart: a picture or a part of one.
struct RgbView {
  const uint8_t* pixels = nullptr;
  int64_t width = 0, height = 0, stride = 0;
};

// A box in a view's pixel coordinates; fractional edges are allowed.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  double width() const { return x1 - x0; }
  double height() const { return y1 - y0; }
};

// Writes `box` of `src` resized to out_height x out_width into dst as float
// RGB (0..255), rows top to bottom, mirrored left-right when `flip`. The filter
// reads pixels around the box where the view has them.
void resample_bilinear(const RgbView& src, const Box& box, int64_t out_height, int64_t out_width,
                       bool flip, float* dst);

// How far beyond a box's edge the filter reads, in source pixels, when the
// box (box_size long) is resized to out_size.
double resample_support(double box_size, int64_t out_size);

}  // namespace drun::data

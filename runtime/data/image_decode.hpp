// Decoding JPEG (libjpeg-turbo) and PNG (libpng) files into 8-bit RGB, told by
// their first bytes rather than their names. A JPEG is decoded only as far as
// asked: the rows and columns of one rectangle (libjpeg-turbo's
// jpeg_skip_scanlines and jpeg_crop_scanline), optionally at 1/2, 1/4 or 1/8
// of its size (its scaled IDCT, as PIL's draft mode); a PNG is decoded whole.
// Grayscale, palette, CMYK and alpha pictures all come out as RGB (alpha
// dropped, as PIL's convert('RGB')).
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace drun::data {

// Rows top to bottom, 3 bytes (R, G, B) per pixel, no padding.
struct RgbImage {
  int64_t width = 0;
  int64_t height = 0;
  std::vector<uint8_t> pixels;
};

// Pixels [x0, x1) x [y0, y1).
struct PixelRect {
  int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// What a caller wants decoded once it knows the picture's size.
struct DecodePlan {
  PixelRect need;  // in full-size pixels
  int shrink = 1;  // 1, 2, 4 or 8: decode at 1/shrink of the size (JPEG only)
};
using PlanDecode = std::function<DecodePlan(int64_t width, int64_t height)>;

// The decoded part: image's pixel (0, 0) is pixel (x0, y0) of the picture at
// 1/shrink of its size. It covers at least the plan's `need`, maybe more.
struct DecodedRegion {
  RgbImage image;
  int64_t x0 = 0, y0 = 0;
  int shrink = 1;
};

// Decodes `bytes` (the whole file), asking `plan` what to decode. Throws
// UsageError starting with `path` for a file that is not a JPEG or PNG, or
// that is corrupt or truncated.
DecodedRegion decode_image(std::span<const uint8_t> bytes, const std::string& path,
                           const PlanDecode& plan);

// The file's bytes; UsageError naming it when it cannot be read.
std::vector<uint8_t> read_file_bytes(const std::string& path);

}  // namespace drun::data

// PNG through libpng's simplified API (png_image), which handles every bit
// depth, palette and gamma itself and reports errors as text, not longjmp.
#include <png.h>

#include <algorithm>
#include <memory>

#include "base/options.hpp"
#include "data/image_codecs.hpp"

namespace drun::data {

DecodedRegion decode_png(std::span<const uint8_t> bytes, const std::string& path,
                         const PlanDecode& plan) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  // Frees libpng's state on every path out, errors included.
  const auto release = [](png_image* p) { png_image_free(p); };
  const std::unique_ptr<png_image, decltype(release)> guard(&image, release);
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    throw UsageError(path + ": corrupt PNG (" + image.message + ")");
  const int64_t width = image.width, height = image.height;
  plan(width, height);  // a PNG is decoded whole whatever the plan

  // With alpha, read RGBA and drop A: compositing (libpng's way to RGB) would
  // change the colour of translucent pixels, which PIL's convert('RGB') keeps.
  const bool alpha = (image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  image.format = alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  DecodedRegion out;
  out.image.width = width;
  out.image.height = height;
  out.image.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.image.pixels.data(), 0, nullptr))
    throw UsageError(path + ": corrupt PNG (" + image.message + ")");
  if (alpha) {
    auto& px = out.image.pixels;
    const size_t n = static_cast<size_t>(width * height);
    for (size_t i = 0; i < n; ++i) std::copy_n(&px[4 * i], 3, &px[3 * i]);
    px.resize(3 * n);
  }
  return out;
}

}  // namespace drun::data

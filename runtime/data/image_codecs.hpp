// The two decoders behind decode_image (data/image_decode.hpp), one per file:
// jpeg_decode.cpp (libjpeg-turbo) and png_decode.cpp (libpng).
#pragma once
#include "data/image_decode.hpp"

namespace drun::data {

DecodedRegion decode_jpeg(std::span<const uint8_t> bytes, const std::string& path,
                          const PlanDecode& plan);
DecodedRegion decode_png(std::span<const uint8_t> bytes, const std::string& path,
                         const PlanDecode& plan);

}  // namespace drun::data

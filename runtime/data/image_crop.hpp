// Which box of a picture becomes the example: torchvision's RandomResizedCrop
// for training and Resize + CenterCrop for evaluation, in the picture's
// full-size pixel coordinates (data/image_resample.hpp resizes the box).
#pragma once
#include <array>
#include <cstdint>

#include "base/rng.hpp"
#include "data/image_resample.hpp"

namespace drun::data {

// torchvision.transforms.RandomResizedCrop.get_params: up to ten draws of an
// area fraction in `scale` and a log-uniform aspect ratio (width / height) in
// `ratio`, the first that fits; else the centre crop of the nearest allowed
// ratio. Integer edges.
Box random_resized_crop(int64_t width, int64_t height, Rng& rng, std::array<double, 2> scale,
                        std::array<double, 2> ratio);

// Resize so that the picture covers floor(out / crop_fraction) in both
// dimensions (the limiting side exactly, the other truncated, as torchvision's
// Resize(int) for a square output), then the centre out_height x out_width
// (torchvision's CenterCrop offsets). The box is that crop mapped back onto
// the picture, so resampling it equals resize-then-crop.
Box centre_crop(int64_t width, int64_t height, int64_t out_height, int64_t out_width,
                double crop_fraction);

}  // namespace drun::data

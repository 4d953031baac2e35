// Follows torchvision 0.2x's transforms.py step by step, including its
// rounding (Python's round is half-to-even: std::nearbyint).
#include "data/image_crop.hpp"

#include <algorithm>
#include <cmath>

namespace drun::data {

namespace {

double uniform(Rng& rng, double lo, double hi) {
  const double u = static_cast<double>(rng.next() >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}

int64_t round_even(double v) {
  return static_cast<int64_t>(std::nearbyint(v));
}

Box pixels(int64_t x, int64_t y, int64_t w, int64_t h) {
  return Box{static_cast<double>(x), static_cast<double>(y), static_cast<double>(x + w),
             static_cast<double>(y + h)};
}

}  // namespace

Box random_resized_crop(int64_t width, int64_t height, Rng& rng, std::array<double, 2> scale,
                        std::array<double, 2> ratio) {
  const double area = static_cast<double>(width * height);
  const double log_lo = std::log(ratio[0]), log_hi = std::log(ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * uniform(rng, scale[0], scale[1]);
    const double aspect = std::exp(uniform(rng, log_lo, log_hi));
    const int64_t w = round_even(std::sqrt(target * aspect));
    const int64_t h = round_even(std::sqrt(target / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const auto y = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(height - h + 1));
      const auto x = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(width - w + 1));
      return pixels(x, y, w, h);
    }
  }
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (in_ratio < ratio[0]) {
    h = std::max<int64_t>(1, round_even(static_cast<double>(w) / ratio[0]));
  } else if (in_ratio > ratio[1]) {
    w = std::max<int64_t>(1, round_even(static_cast<double>(h) * ratio[1]));
  }
  return pixels((width - w) / 2, (height - h) / 2, w, h);
}

Box centre_crop(int64_t width, int64_t height, int64_t out_height, int64_t out_width,
                double crop_fraction) {
  // floor with a little slack: 224 / 0.875 is 256, not 255.99999.
  const auto cover_h = static_cast<int64_t>(std::floor(out_height / crop_fraction + 1e-9));
  const auto cover_w = static_cast<int64_t>(std::floor(out_width / crop_fraction + 1e-9));
  const double W = static_cast<double>(width), H = static_cast<double>(height);
  int64_t new_h, new_w;
  if (static_cast<double>(cover_h) / H >= static_cast<double>(cover_w) / W) {
    new_h = cover_h;
    new_w = static_cast<int64_t>(static_cast<double>(cover_h) * W / H);
  } else {
    new_w = cover_w;
    new_h = static_cast<int64_t>(static_cast<double>(cover_w) * H / W);
  }
  const int64_t top = round_even(static_cast<double>(new_h - out_height) / 2.0);
  const int64_t left = round_even(static_cast<double>(new_w - out_width) / 2.0);
  const double sx = W / static_cast<double>(new_w), sy = H / static_cast<double>(new_h);
  return Box{static_cast<double>(left) * sx, static_cast<double>(top) * sy,
             static_cast<double>(left + out_width) * sx,
             static_cast<double>(top + out_height) * sy};
}

}  // namespace drun::data

#include "data/augment.hpp"

#include <cmath>

#include "base/rng.hpp"

namespace drun::data {

bool augments(const PipelineSpec& spec) {
  return spec.crop_padding > 0 || spec.flip || spec.standardize;
}

void augment_example(const PipelineSpec& spec, int64_t h, int64_t w, int64_t c, const float* src,
                     float* dst, int64_t epoch, int64_t position) {
  Rng rng(
      mix_bits(spec.augment_seed ^ mix_bits(static_cast<uint64_t>(epoch) * 0x9e3779b97f4a7c15ULL +
                                            static_cast<uint64_t>(position))));
  const int64_t pad = spec.crop_padding;
  const int64_t oy =
      pad > 0 ? static_cast<int64_t>(rng.next() % static_cast<uint64_t>(2 * pad + 1)) : pad;
  const int64_t ox =
      pad > 0 ? static_cast<int64_t>(rng.next() % static_cast<uint64_t>(2 * pad + 1)) : pad;
  const bool flip = spec.flip && rng.uniform() < 0.5f;
  const float scale = spec.scale, offset = spec.offset;
  // Output (y, x) is the padded image's (y + oy, x' + ox), x' mirrored when
  // flipping; the padded image is the source shifted by pad, zero outside.
  for (int64_t y = 0; y < h; ++y) {
    const int64_t sy = y + oy - pad;
    for (int64_t x = 0; x < w; ++x) {
      const int64_t sx = (flip ? w - 1 - x : x) + ox - pad;
      float* out = dst + (y * w + x) * c;
      if (sy < 0 || sy >= h || sx < 0 || sx >= w) {
        for (int64_t k = 0; k < c; ++k) out[k] = 0.0f;
        continue;
      }
      const float* in = src + (sy * w + sx) * c;
      for (int64_t k = 0; k < c; ++k) out[k] = in[k] * scale + offset;
    }
  }
  if (!spec.standardize) return;
  const int64_t n = h * w * c;
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += dst[i];
    sum_sq += static_cast<double>(dst[i]) * dst[i];
  }
  const double mean = sum / static_cast<double>(n);
  const double var = std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean);
  const double stddev = std::max(std::sqrt(var), 1.0 / std::sqrt(static_cast<double>(n)));
  const auto m = static_cast<float>(mean), inv = static_cast<float>(1.0 / stddev);
  for (int64_t i = 0; i < n; ++i) dst[i] = (dst[i] - m) * inv;
}

}  // namespace drun::data

// Separable resampling as PIL's ImagingResample: precompute each output
// column's and row's taps (precompute_coeffs in PIL's Resample.c), resample the
// rows the vertical taps need horizontally, then vertically.
#include "data/image_resample.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace drun::data {

namespace {

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// For each output pixel: the first input pixel it reads, how many, and their
// weights (summing to 1), in blocks of `stride` weights.
struct Taps {
  std::vector<int64_t> first, count;
  std::vector<float> weights;
  int64_t stride = 0;
};

Taps make_taps(int64_t in_size, double in0, double in1, int64_t out_size) {
  const double scale = (in1 - in0) / static_cast<double>(out_size);
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;  // the triangle's support is 1
  Taps t;
  t.stride = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<size_t>(out_size));
  t.count.resize(static_cast<size_t>(out_size));
  t.weights.assign(static_cast<size_t>(out_size * t.stride), 0.0f);
  std::vector<double> w(static_cast<size_t>(t.stride));
  for (int64_t i = 0; i < out_size; ++i) {
    const double center = in0 + (static_cast<double>(i) + 0.5) * scale;
    // PIL truncates toward zero here, then clamps.
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in_size);
    const int64_t n = std::clamp<int64_t>(hi - lo, 0, t.stride);
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      w[static_cast<size_t>(k)] =
          triangle((static_cast<double>(k + lo) - center + 0.5) / filterscale);
      sum += w[static_cast<size_t>(k)];
    }
    for (int64_t k = 0; k < n; ++k)
      t.weights[static_cast<size_t>(i * t.stride + k)] =
          static_cast<float>(sum != 0 ? w[static_cast<size_t>(k)] / sum : 0.0);
    t.first[static_cast<size_t>(i)] = lo;
    t.count[static_cast<size_t>(i)] = n;
  }
  return t;
}

}  // namespace

double resample_support(double box_size, int64_t out_size) {
  return std::max(box_size / static_cast<double>(out_size), 1.0);
}

void resample_bilinear(const RgbView& src, const Box& box, int64_t out_height, int64_t out_width,
                       bool flip, float* dst) {
  const Taps across = make_taps(src.width, box.x0, box.x1, out_width);
  const Taps down = make_taps(src.height, box.y0, box.y1, out_height);
  // Only the rows some output row reads are resampled across.
  int64_t row0 = src.height, row1 = 0;
  for (int64_t y = 0; y < out_height; ++y) {
    const auto i = static_cast<size_t>(y);
    if (down.count[i] == 0) continue;
    row0 = std::min(row0, down.first[i]);
    row1 = std::max(row1, down.first[i] + down.count[i]);
  }
  row1 = std::max(row1, row0);
  std::vector<float> rows(static_cast<size_t>((row1 - row0) * out_width * 3));
  for (int64_t r = row0; r < row1; ++r) {
    const uint8_t* in = src.pixels + r * src.stride;
    float* out = rows.data() + (r - row0) * out_width * 3;
    for (int64_t x = 0; x < out_width; ++x) {
      const auto i = static_cast<size_t>(x);
      const float* w = across.weights.data() + x * across.stride;
      const uint8_t* p = in + across.first[i] * 3;
      float r0 = 0, g0 = 0, b0 = 0;
      for (int64_t k = 0; k < across.count[i]; ++k, p += 3) {
        r0 += w[k] * p[0];
        g0 += w[k] * p[1];
        b0 += w[k] * p[2];
      }
      float* o = out + (flip ? out_width - 1 - x : x) * 3;
      o[0] = r0;
      o[1] = g0;
      o[2] = b0;
    }
  }
  const int64_t row_floats = out_width * 3;
  for (int64_t y = 0; y < out_height; ++y) {
    const auto i = static_cast<size_t>(y);
    float* out = dst + y * row_floats;
    std::fill(out, out + row_floats, 0.0f);
    const float* w = down.weights.data() + y * down.stride;
    for (int64_t k = 0; k < down.count[i]; ++k) {
      const float* in = rows.data() + (down.first[i] + k - row0) * row_floats;
      const float wk = w[k];
      for (int64_t j = 0; j < row_floats; ++j) out[j] += wk * in[j];
    }
  }
}

}  // namespace drun::data

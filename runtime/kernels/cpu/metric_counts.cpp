#include "kernels/metric_counts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/elementwise.hpp"

namespace drun::kernels::cpu {

void top_k_hits(const float* pred, const int32_t* labels, const float* targets, int64_t rows,
                int64_t cols, int k, float* sum) {
  int64_t hits = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = pred + r * cols;
    int32_t want = 0;
    if (targets)
      argmax_rows(targets + r * cols, 1, cols, &want);
    else
      want = labels[r];
    if (want < 0 || want >= cols) continue;  // a miss, as no rank fits it
    float at = row[want];
    if (std::isnan(at)) at = -std::numeric_limits<float>::infinity();
    int64_t above = 0;
    for (int64_t c = 0; c < cols; ++c) above += row[c] > at;
    hits += above < k;
  }
  *sum = static_cast<float>(hits);
}

// The counts are added up in place: whole numbers, exact in float32 up to
// 2^24, and a step allocates nothing.
void threshold_counts(const float* pred, const float* targets, int64_t n, Thresholds th,
                      float* counts) {
  const int t_count = th.count;
  std::fill(counts, counts + 2 * t_count + 2, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const bool positive = targets[i] != 0.0f;
    counts[2 * t_count + (positive ? 0 : 1)] += 1.0f;
    for (int t = 0; t < t_count; ++t)
      if (pred[i] > th.at[t]) counts[(positive ? 0 : t_count) + t] += 1.0f;
  }
}

void bucket_counts(const float* pred, const float* targets, int64_t n, int64_t buckets,
                   float* counts) {
  std::fill(counts, counts + 2 * buckets, 0.0f);
  const float scale = static_cast<float>(buckets - 1);
  for (int64_t i = 0; i < n; ++i) {
    const float p = std::clamp(pred[i], 0.0f, 1.0f);
    const float up = std::ceil(p * scale);  // float32, as Keras computes it
    const int64_t b = std::isnan(up) ? 0 : std::max<int64_t>(static_cast<int64_t>(up) - 1, 0);
    counts[(targets[i] != 0.0f ? 0 : buckets) + b] += 1.0f;
  }
}

// Per class, the rows in order, in float32 as Keras sums them.
void class_counts(const float* pred, const float* targets, int64_t rows, int64_t cols, bool argmax,
                  float threshold, float* counts) {
  std::fill(counts, counts + 4 * cols, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = pred + r * cols;
    const float* t = targets + r * cols;
    const float top = argmax ? *std::max_element(p, p + cols) : threshold;
    for (int64_t j = 0; j < cols; ++j) {
      const float y = (argmax ? p[j] >= top && std::fabs(p[j]) > 1e-9f : p[j] > threshold);
      counts[j] += y * t[j];
      counts[cols + j] += y * (1.0f - t[j]);
      counts[2 * cols + j] += (1.0f - y) * t[j];
      counts[3 * cols + j] += t[j];
    }
  }
}

}  // namespace drun::kernels::cpu

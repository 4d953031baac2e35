#include "kernels/metric.hpp"

#include <cmath>

#include "kernels/elementwise.hpp"

namespace drun::kernels::cpu {

namespace {
// Where argmax_rows puts a row's maximum.
int64_t argmax(const float* row, int64_t cols) {
  int32_t at = 0;
  argmax_rows(row, 1, cols, &at);
  return at;
}
}  // namespace

void label_hits(const float* pred, const int32_t* labels, int64_t rows, int64_t cols, float* sum) {
  int64_t hits = 0;
  for (int64_t r = 0; r < rows; ++r) hits += argmax(pred + r * cols, cols) == labels[r];
  *sum = static_cast<float>(hits);
}

void argmax_hits(const float* pred, const float* targets, int64_t rows, int64_t cols, float* sum) {
  int64_t hits = 0;
  for (int64_t r = 0; r < rows; ++r)
    hits += argmax(pred + r * cols, cols) == argmax(targets + r * cols, cols);
  *sum = static_cast<float>(hits);
}

void threshold_hits(const float* pred, const float* targets, int64_t n, float threshold,
                    float* sum) {
  int64_t hits = 0;
  for (int64_t i = 0; i < n; ++i) hits += (pred[i] > threshold) == (targets[i] > 0.5f);
  *sum = static_cast<float>(hits);
}

void error_sum(const float* pred, const float* targets, int64_t n, bool squared, float* sum) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(pred[i]) - targets[i];
    total += squared ? d * d : std::fabs(d);
  }
  *sum = static_cast<float>(total);
}

}  // namespace drun::kernels::cpu

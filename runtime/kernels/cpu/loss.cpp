#include "kernels/loss.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace drun::kernels::cpu {

namespace {
// Keras clips probabilities to [eps, 1 - eps] before taking logs.
constexpr float kEps = 1e-7f;
// The loss of a batch with a label outside [0, cols).
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

// The scalar reference: the CPU op runs the instruction set's rows
// (isa/softmax_xent_impl.hpp, over threads in ops_cpu.cpp), which the tests,
// and the GPU's kernel, compare against this.
void softmax_xent_sparse(const float* logits, const int32_t* labels, int64_t rows, int64_t cols,
                         float* grad, float* loss) {
  double total = 0.0;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = logits + r * cols;
    float* g = grad + r * cols;
    const int32_t label = labels[r];
    if (label < 0 || label >= cols) {
      std::fill(g, g + cols, 0.0f);
      total = kNaN;
      continue;
    }
    const float m = *std::max_element(z, z + cols);
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) sum += (g[j] = std::exp(z[j] - m));
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < cols; ++j) g[j] *= inv * inv_rows;
    g[label] -= inv_rows;
    total += static_cast<double>(std::log(sum) + m - z[label]);
  }
  *loss = static_cast<float>(total / static_cast<double>(rows));
}

void xent_sparse_probs(const float* probs, const int32_t* labels, int64_t rows, int64_t cols,
                       float* grad, float* loss) {
  double total = 0.0;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = probs + r * cols;
    float* g = grad + r * cols;
    for (int64_t j = 0; j < cols; ++j) g[j] = 0.0f;
    const int32_t label = labels[r];
    if (label < 0 || label >= cols) {
      total = kNaN;
      continue;
    }
    const float pl = p[label];
    const float clipped = std::clamp(pl, kEps, 1.0f - kEps);
    total -= std::log(static_cast<double>(clipped));
    g[label] = (pl > kEps && pl < 1.0f - kEps) ? -inv_rows / pl : 0.0f;
  }
  *loss = static_cast<float>(total / static_cast<double>(rows));
}

void softmax_xent_dense(const float* logits, const float* targets, int64_t rows, int64_t cols,
                        float* grad, float* loss) {
  double total = 0.0;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = logits + r * cols;
    const float* t = targets + r * cols;
    float* g = grad + r * cols;
    const float m = *std::max_element(z, z + cols);
    float sum = 0.0f, tsum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      sum += (g[j] = std::exp(z[j] - m));
      tsum += t[j];
    }
    const float lse = std::log(sum) + m;
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < cols; ++j) {
      total += static_cast<double>(t[j] * (lse - z[j]));
      g[j] = (g[j] * inv * tsum - t[j]) * inv_rows;
    }
  }
  *loss = static_cast<float>(total / static_cast<double>(rows));
}

void xent_dense_probs(const float* probs, const float* targets, int64_t rows, int64_t cols,
                      float* grad, float* loss) {
  double total = 0.0;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float p = probs[i];
    const float clipped = std::clamp(p, kEps, 1.0f - kEps);
    total -= static_cast<double>(targets[i]) * std::log(static_cast<double>(clipped));
    grad[i] = (p > kEps && p < 1.0f - kEps) ? -targets[i] / p * inv_rows : 0.0f;
  }
  *loss = static_cast<float>(total / static_cast<double>(rows));
}

void sigmoid_bce(const float* logits, const float* targets, int64_t n, float* grad, float* loss) {
  double total = 0.0;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int64_t i = 0; i < n; ++i) {
    const float z = logits[i], t = targets[i];
    // max(z,0) - z t + log(1 + e^-|z|): stable for large |z|.
    total += static_cast<double>(std::max(z, 0.0f) - z * t + std::log1p(std::exp(-std::fabs(z))));
    grad[i] = (1.0f / (1.0f + std::exp(-z)) - t) * inv_n;
  }
  *loss = static_cast<float>(total / static_cast<double>(n));
}

void bce_probs(const float* probs, const float* targets, int64_t n, float* grad, float* loss) {
  double total = 0.0;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int64_t i = 0; i < n; ++i) {
    const float p = std::clamp(probs[i], kEps, 1.0f - kEps), t = targets[i];
    total -= static_cast<double>(t * std::log(p) + (1.0f - t) * std::log(1.0f - p));
    const bool inside = probs[i] > kEps && probs[i] < 1.0f - kEps;
    grad[i] = inside ? (p - t) / (p * (1.0f - p)) * inv_n : 0.0f;
  }
  *loss = static_cast<float>(total / static_cast<double>(n));
}

void mse(const float* pred, const float* targets, int64_t n, float* grad, float* loss) {
  double total = 0.0;
  const float scale = 2.0f / static_cast<float>(n);
  for (int64_t i = 0; i < n; ++i) {
    const float d = pred[i] - targets[i];
    total += static_cast<double>(d) * d;
    grad[i] = d * scale;
  }
  *loss = static_cast<float>(total / static_cast<double>(n));
}

}  // namespace drun::kernels::cpu

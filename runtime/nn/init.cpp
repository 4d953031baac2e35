#include "nn/init.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/options.hpp"

namespace drun::nn {

namespace {
// Keras divides by the standard deviation of a unit normal truncated at 2.
constexpr float kTruncatedStd = 0.87962566103423978f;

void fill_uniform(Tensor& t, float limit, Rng& rng) {
  for (float& v : t.span_f32()) v = rng.uniform(-limit, limit);
}
void fill_truncated(Tensor& t, float stddev, Rng& rng) {
  for (float& v : t.span_f32()) v = rng.truncated_normal() * stddev / kTruncatedStd;
}

// Keras' Orthogonal (gain 1): the Q of a Gaussian matrix's QR, signs fixed by
// R's diagonal, here by modified Gram-Schmidt in double over the longer
// side's vectors, transposed where the matrix is wider than tall.
void fill_orthogonal(Tensor& t, Rng& rng) {
  const int64_t cols = t.rank() ? t.dim(-1) : 1, rows = t.numel() / cols;
  const int64_t n = std::max(rows, cols), m = std::min(rows, cols);
  // m vectors of length n, each orthonormalised against those before it.
  std::vector<double> q(static_cast<size_t>(n * m));
  for (double& v : q) v = rng.normal();
  for (int64_t k = 0; k < m; ++k) {
    double* qk = q.data() + k * n;
    for (int64_t p = 0; p < k; ++p) {
      const double* qp = q.data() + p * n;
      double dot = 0.0;
      for (int64_t i = 0; i < n; ++i) dot += qp[i] * qk[i];
      for (int64_t i = 0; i < n; ++i) qk[i] -= dot * qp[i];
    }
    double norm = 0.0;
    for (int64_t i = 0; i < n; ++i) norm += qk[i] * qk[i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < n; ++i) qk[i] /= norm;
  }
  // Vector k is column k of a tall matrix, row k of a wide one.
  float* out = t.f32();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = static_cast<float>(rows >= cols ? q[c * n + r] : q[r * n + c]);
}
}  // namespace

void initialize(Tensor& t, const std::string& name, int64_t fan_in, int64_t fan_out, Rng& rng,
                const std::string& owner) {
  const float fi = static_cast<float>(fan_in), fo = static_cast<float>(fan_out);
  if (name == "zeros") return t.fill(0.0f);
  if (name == "ones") return t.fill(1.0f);
  // Keras' RandomUniform with its defaults (Embedding's table).
  if (name == "uniform" || name == "random_uniform") return fill_uniform(t, 0.05f, rng);
  if (name == "glorot_uniform") return fill_uniform(t, std::sqrt(6.0f / (fi + fo)), rng);
  if (name == "glorot_normal") return fill_truncated(t, std::sqrt(2.0f / (fi + fo)), rng);
  if (name == "he_normal") return fill_truncated(t, std::sqrt(2.0f / fi), rng);
  if (name == "he_uniform") return fill_uniform(t, std::sqrt(6.0f / fi), rng);
  if (name == "lecun_normal") return fill_truncated(t, std::sqrt(1.0f / fi), rng);
  if (name == "lecun_uniform") return fill_uniform(t, std::sqrt(3.0f / fi), rng);
  if (name == "orthogonal") return fill_orthogonal(t, rng);
  throw UsageError(owner + ": unknown initializer '" + name +
                   "'; valid: glorot_uniform, glorot_normal, he_normal, he_uniform, "
                   "lecun_normal, lecun_uniform, orthogonal, zeros, ones, uniform, random_uniform");
}

}  // namespace drun::nn

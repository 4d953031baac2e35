#include "nn/init.hpp"

#include <cmath>

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
  throw UsageError(owner + ": unknown initializer '" + name +
                   "'; valid: glorot_uniform, glorot_normal, he_normal, he_uniform, "
                   "lecun_normal, lecun_uniform, zeros, ones, uniform, random_uniform");
}

}  // namespace drun::nn

#include "kernels/batchnorm.hpp"

#include <cmath>

namespace drun::kernels::cpu {

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y) {
  // mean and inv_std double as accumulators for sum and sum of squares.
  for (int64_t j = 0; j < c; ++j) mean[j] = inv_std[j] = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    for (int64_t j = 0; j < c; ++j) mean[j] += xr[j];
  }
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t j = 0; j < c; ++j) mean[j] *= inv_rows;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    for (int64_t j = 0; j < c; ++j) {
      const float d = xr[j] - mean[j];
      inv_std[j] += d * d;
    }
  }
  for (int64_t j = 0; j < c; ++j) {
    const float var = inv_std[j] * inv_rows;
    inv_std[j] = 1.0f / std::sqrt(var + eps);
    moving_mean[j] = moving_mean[j] * momentum + mean[j] * (1.0f - momentum);
    // Keras 3 moves the variance with the biased batch variance.
    moving_var[j] = moving_var[j] * momentum + var * (1.0f - momentum);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* yr = y + r * c;
    for (int64_t j = 0; j < c; ++j) yr[j] = (xr[j] - mean[j]) * inv_std[j] * gamma[j] + beta[j];
  }
}

void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, const float* moving_mean,
                             const float* moving_var, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* yr = y + r * c;
    for (int64_t j = 0; j < c; ++j)
      yr[j] = (xr[j] - moving_mean[j]) / std::sqrt(moving_var[j] + eps) * gamma[j] + beta[j];
  }
}

void batchnorm_backward(const float* x, const float* dy, int64_t rows, int64_t c,
                        const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta) {
  for (int64_t j = 0; j < c; ++j) dgamma[j] = dbeta[j] = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    const float* dyr = dy + r * c;
    for (int64_t j = 0; j < c; ++j) {
      dbeta[j] += dyr[j];
      dgamma[j] += dyr[j] * (xr[j] - mean[j]) * inv_std[j];
    }
  }
  const float inv_rows = batch_statistics ? 1.0f / static_cast<float>(rows) : 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    const float* dyr = dy + r * c;
    float* dxr = dx + r * c;
    for (int64_t j = 0; j < c; ++j) {
      const float xhat = (xr[j] - mean[j]) * inv_std[j];
      dxr[j] = gamma[j] * inv_std[j] * (dyr[j] - (dbeta[j] + xhat * dgamma[j]) * inv_rows);
    }
  }
}

}  // namespace drun::kernels::cpu

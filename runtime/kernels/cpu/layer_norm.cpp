// Layer normalisation on the CPU (kernels/layer_norm.hpp), one row at a time:
// each row's statistics are two passes over its c values (the mean, then the
// squared deviations from it: no cancellation when the mean is large), each
// a loop the compiler vectorises. ops_cpu.cpp splits the rows over threads.
#include "kernels/layer_norm.hpp"

#include <cmath>

namespace drun::kernels::cpu {

void layer_norm_forward(const float* x, int64_t rows, int64_t c, const float* gamma,
                        const float* beta, float eps, float* mean, float* inv_std, float* y) {
  const float inv_c = 1.0f / static_cast<float>(c);
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * c;
    float* __restrict yr = y + r * c;
    float sum = 0.0f;
    for (int64_t j = 0; j < c; ++j) sum += xr[j];
    const float m = sum * inv_c;
    float sq = 0.0f;
    for (int64_t j = 0; j < c; ++j) sq += (xr[j] - m) * (xr[j] - m);
    const float s = 1.0f / std::sqrt(sq * inv_c + eps);
    mean[r] = m;
    inv_std[r] = s;
    for (int64_t j = 0; j < c; ++j) {
      const float xhat = (xr[j] - m) * s;
      yr[j] = (gamma ? xhat * gamma[j] : xhat) + (beta ? beta[j] : 0.0f);
    }
  }
}

// dx = inv_std (g - mean(g) - xhat mean(g xhat)), g = dy gamma: the
// gradient through the row's own mean and variance.
void layer_norm_backward_input(const float* x, const float* dy, int64_t rows, int64_t c,
                               const float* gamma, const float* mean, const float* inv_std,
                               float* dx) {
  const float inv_c = 1.0f / static_cast<float>(c);
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * c;
    const float* __restrict dyr = dy + r * c;
    float* __restrict dxr = dx + r * c;
    const float m = mean[r], s = inv_std[r];
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (int64_t j = 0; j < c; ++j) {
      const float g = gamma ? dyr[j] * gamma[j] : dyr[j];
      sum_g += g;
      sum_gx += g * (xr[j] - m) * s;
    }
    const float mg = sum_g * inv_c, mgx = sum_gx * inv_c;
    for (int64_t j = 0; j < c; ++j) {
      const float g = gamma ? dyr[j] * gamma[j] : dyr[j];
      dxr[j] = s * (g - mg - (xr[j] - m) * s * mgx);
    }
  }
}

void layer_norm_param_grads(const float* x, const float* dy, int64_t rows, int64_t c,
                            const float* mean, const float* inv_std, float* dgamma, float* dbeta) {
  for (int64_t j = 0; j < c; ++j) {
    if (dgamma) dgamma[j] = 0.0f;
    if (dbeta) dbeta[j] = 0.0f;
  }
  // Rows in order, columns inner: each sum's order is fixed, the loop vectorises.
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * c;
    const float* __restrict dyr = dy + r * c;
    const float m = mean[r], s = inv_std[r];
    if (dgamma)
      for (int64_t j = 0; j < c; ++j) dgamma[j] += dyr[j] * ((xr[j] - m) * s);
    if (dbeta)
      for (int64_t j = 0; j < c; ++j) dbeta[j] += dyr[j];
  }
}

}  // namespace drun::kernels::cpu

#include "kernels/dropout.hpp"

namespace drun::kernels::cpu {

void dropout_forward(const float* x, float* mask, float* y, int64_t n, uint64_t key, float keep) {
  const float scale = 1.0f / keep;
  for (int64_t i = 0; i < n; ++i) {
    const float m = dropout_uniform(key, i) < keep ? scale : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

}  // namespace drun::kernels::cpu

#include "kernels/dropout.hpp"

namespace drun::kernels::cpu {

void dropout_set_key(uint64_t key, int32_t* stored) {
  dropout_store_key(key, stored);
}

void dropout_forward(const float* x, float* mask, float* y, int64_t n, const int32_t* stored,
                     int64_t first, float keep) {
  const uint64_t key = dropout_key(stored);
  const float scale = 1.0f / keep;
  for (int64_t i = 0; i < n; ++i) {
    const float m = dropout_uniform(key, first + i) < keep ? scale : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

}  // namespace drun::kernels::cpu

#include "kernels/batchnorm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/batchnorm_threads.hpp"

namespace drun::kernels::cpu {

namespace {

// Per-channel sums over rows are taken in fixed blocks of rows, each block's
// sums added in block order: the result depends on the shape alone, never on
// how many threads ran the blocks. The partial sums live on the stack.
constexpr int64_t kMaxPartialFloats = 8192;  // 32 KiB
constexpr int64_t kMinBlockRows = 1024;

int64_t sum_blocks(int64_t rows, int64_t c) {
  return std::clamp<int64_t>(std::min(rows / kMinBlockRows, kMaxPartialFloats / (2 * c)), 1, 64);
}

// Runs f(block, r0, r1) over `blocks` equal row ranges on up to `threads` threads.
template <class F>
void over_blocks(int64_t rows, int64_t blocks, int threads, F&& f) {
  const int64_t per = (rows + blocks - 1) / blocks;
  const int parts = static_cast<int>(std::min<int64_t>(threads, blocks));
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
  for (int64_t b = 0; b < blocks; ++b) f(b, std::min(rows, b * per), std::min(rows, (b + 1) * per));
}

// s[j] = sum of the blocks' partial[b * c + j], in block order; nothing to
// do where the one block summed straight into s (`partial` is s).
void add_blocks(const float* partial, int64_t blocks, int64_t c, float* s) {
  if (partial == s) return;
  for (int64_t j = 0; j < c; ++j) s[j] = 0.0f;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < c; ++j) s[j] += partial[b * c + j];
}

}  // namespace

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y,
                             int threads) {
  const int64_t blocks = sum_blocks(rows, c);
  float partial[kMaxPartialFloats];
  // Too many channels for the partial sums: one block, summed in place.
  const bool direct = 2 * c > kMaxPartialFloats;
  // The mean, then the variance around it (two passes, as before: stable).
  over_blocks(rows, blocks, threads, [&](int64_t b, int64_t r0, int64_t r1) {
    float* s = direct ? mean : partial + b * c;
    for (int64_t j = 0; j < c; ++j) s[j] = 0.0f;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = 0; j < c; ++j) s[j] += x[r * c + j];
  });
  add_blocks(direct ? mean : partial, blocks, c, mean);
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t j = 0; j < c; ++j) mean[j] *= inv_rows;
  over_blocks(rows, blocks, threads, [&](int64_t b, int64_t r0, int64_t r1) {
    float* s = direct ? inv_std : partial + b * c;
    for (int64_t j = 0; j < c; ++j) s[j] = 0.0f;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = 0; j < c; ++j) {
        const float d = x[r * c + j] - mean[j];
        s[j] += d * d;
      }
  });
  add_blocks(direct ? inv_std : partial, blocks, c, inv_std);
  for (int64_t j = 0; j < c; ++j) {
    const float var = inv_std[j] * inv_rows;
    inv_std[j] = 1.0f / std::sqrt(var + eps);
    moving_mean[j] = moving_mean[j] * momentum + mean[j] * (1.0f - momentum);
    // Keras 3 moves the variance with the biased batch variance.
    moving_var[j] = moving_var[j] * momentum + var * (1.0f - momentum);
  }
  over_blocks(rows, blocks, threads, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * c;
      float* yr = y + r * c;
      for (int64_t j = 0; j < c; ++j) yr[j] = (xr[j] - mean[j]) * inv_std[j] * gamma[j] + beta[j];
    }
  });
}

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y) {
  batchnorm_forward_train(x, rows, c, gamma, beta, eps, momentum, moving_mean, moving_var, mean,
                          inv_std, y, 1);
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
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta,
                        int threads) {
  const int64_t blocks = sum_blocks(rows, c);
  float partial[kMaxPartialFloats];  // dbeta's partial sums, then dgamma's
  const bool direct = 2 * c > kMaxPartialFloats;
  over_blocks(rows, blocks, threads, [&](int64_t b, int64_t r0, int64_t r1) {
    float* sb = direct ? dbeta : partial + b * c;
    float* sg = direct ? dgamma : partial + (blocks + b) * c;
    for (int64_t j = 0; j < c; ++j) sb[j] = sg[j] = 0.0f;
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * c;
      const float* dyr = dy + r * c;
      for (int64_t j = 0; j < c; ++j) {
        sb[j] += dyr[j];
        sg[j] += dyr[j] * (xr[j] - mean[j]) * inv_std[j];
      }
    }
  });
  add_blocks(direct ? dbeta : partial, blocks, c, dbeta);
  add_blocks(direct ? dgamma : partial + blocks * c, blocks, c, dgamma);
  const float inv_rows = batch_statistics ? 1.0f / static_cast<float>(rows) : 0.0f;
  over_blocks(rows, blocks, threads, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * c;
      const float* dyr = dy + r * c;
      float* dxr = dx + r * c;
      for (int64_t j = 0; j < c; ++j) {
        const float xhat = (xr[j] - mean[j]) * inv_std[j];
        dxr[j] = gamma[j] * inv_std[j] * (dyr[j] - (dbeta[j] + xhat * dgamma[j]) * inv_rows);
      }
    }
  });
}

void batchnorm_backward(const float* x, const float* dy, int64_t rows, int64_t c,
                        const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta) {
  batchnorm_backward(x, dy, rows, c, gamma, mean, inv_std, batch_statistics, dx, dgamma, dbeta, 1);
}

}  // namespace drun::kernels::cpu

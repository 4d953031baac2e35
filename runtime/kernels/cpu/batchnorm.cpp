#include "kernels/batchnorm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "kernels/cpu/batchnorm_threads.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

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

void image_moments(const float* y, int64_t pixels, int64_t c, float* mean, float* m2) {
  // Shifted by the image's first pixel, as batchnorm_forward_train's sums.
  cpu_kernels().bn_shifted_sums(y, c, 0, pixels, mean, m2);
  const double p = static_cast<double>(pixels);
  for (int64_t j = 0; j < c; ++j) {
    const double d = mean[j] / p, s2 = m2[j];
    mean[j] = static_cast<float>(y[j] + d);
    m2[j] = static_cast<float>(std::max(0.0, s2 - p * d * d));
  }
}

namespace {

// Channel j's batch mean and (biased) variance from its images' moments:
// Chan et al.'s pairwise formula with equal counts, in double and in image
// order, so the result does not depend on the thread count either.
std::pair<double, double> combine_moments(const float* moments, int64_t images, int64_t rows,
                                          int64_t c, int64_t j) {
  const double per_image = static_cast<double>(rows) / static_cast<double>(images);
  double m = 0.0, v = 0.0;
  for (int64_t n = 0; n < images; ++n) m += moments[n * 2 * c + j];
  m /= static_cast<double>(images);
  for (int64_t n = 0; n < images; ++n) {
    const double d = moments[n * 2 * c + j] - m;
    v += moments[(n * 2 + 1) * c + j] + per_image * d * d;
  }
  return {m, v / static_cast<double>(rows)};
}

}  // namespace

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y, bool relu,
                             int threads, const float* moments, int64_t images) {
  const CpuKernels& k = cpu_kernels();
  const int64_t blocks = sum_blocks(rows, c);
  const bool from_moments = moments && images > 0 && rows > 0;
  float partial[kMaxPartialFloats];
  // Too many channels for the partial sums: one block, summed in place.
  const bool direct = 2 * c > kMaxPartialFloats;
  if (!from_moments) {
    // The mean and the variance in one pass: per block, the sums of d = x - s
    // and of d^2, s being the first row. s lies within a few standard
    // deviations of the mean, so sum(d^2)/n - mean(d)^2 does not cancel the
    // way sum(x^2)/n - mean(x)^2 does when the mean is large; the blocks'
    // sums are combined in double. One read of x fewer than mean-then-variance.
    over_blocks(rows, blocks, threads, [&](int64_t b, int64_t r0, int64_t r1) {
      k.bn_shifted_sums(x, c, r0, r1, direct ? mean : partial + b * c,
                        direct ? inv_std : partial + (blocks + b) * c);
    });
  }
  // Channel j's batch mean and variance from the blocks' shifted sums.
  auto from_sums = [&](int64_t j) -> std::pair<double, double> {
    double t1 = 0.0, t2 = 0.0;
    if (direct) {
      t1 = mean[j];
      t2 = inv_std[j];
    } else {
      for (int64_t b = 0; b < blocks; ++b) {
        t1 += partial[b * c + j];
        t2 += partial[(blocks + b) * c + j];
      }
    }
    // With no rows: 0 / 0, NaN statistics, as CUDA's.
    const double n = static_cast<double>(rows);
    const double m1 = t1 / n, shift = rows > 0 ? x[j] : 0.0;
    return {shift + m1, t2 / n - m1 * m1};  // < 0 only by rounding; NaN stays NaN
  };
  for (int64_t j = 0; j < c; ++j) {
    const auto [m, v] = from_moments ? combine_moments(moments, images, rows, c, j) : from_sums(j);
    const float var = v < 0.0 ? 0.0f : static_cast<float>(v);
    mean[j] = static_cast<float>(m);
    inv_std[j] = 1.0f / std::sqrt(var + eps);
    moving_mean[j] = moving_mean[j] * momentum + mean[j] * (1.0f - momentum);
    // Keras 3 moves the variance with the biased batch variance.
    moving_var[j] = moving_var[j] * momentum + var * (1.0f - momentum);
  }
  over_blocks(rows, blocks, threads, [&](int64_t, int64_t r0, int64_t r1) {
    k.bn_normalize(x, c, mean, inv_std, gamma, beta, relu, r0, r1, y);
  });
}

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y) {
  batchnorm_forward_train(x, rows, c, gamma, beta, eps, momentum, moving_mean, moving_var, mean,
                          inv_std, y, false, 1);
}

void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, const float* moving_mean,
                             const float* moving_var, float* y, bool relu) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* yr = y + r * c;
    for (int64_t j = 0; j < c; ++j)
      yr[j] = (xr[j] - moving_mean[j]) / std::sqrt(moving_var[j] + eps) * gamma[j] + beta[j];
    if (relu)
      for (int64_t j = 0; j < c; ++j) yr[j] = std::max(0.0f, yr[j]);
  }
}

void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, const float* moving_mean,
                             const float* moving_var, float* y) {
  batchnorm_forward_infer(x, rows, c, gamma, beta, eps, moving_mean, moving_var, y, false);
}

void batchnorm_backward(const float* x, const float* dy, const float* relu_beta, int64_t rows,
                        int64_t c, const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta,
                        int threads) {
  const int64_t blocks = sum_blocks(rows, c);
  float partial[kMaxPartialFloats];  // dbeta's partial sums, then dgamma's
  const bool direct = 2 * c > kMaxPartialFloats;
  const float inv_rows = batch_statistics ? 1.0f / static_cast<float>(rows) : 0.0f;
  const CpuKernels& k = cpu_kernels();
  over_blocks(rows, blocks, threads, [&](int64_t b, int64_t r0, int64_t r1) {
    k.bn_grad_sums(x, dy, c, mean, inv_std, gamma, relu_beta, r0, r1,
                   direct ? dbeta : partial + b * c, direct ? dgamma : partial + (blocks + b) * c);
  });
  add_blocks(direct ? dbeta : partial, blocks, c, dbeta);
  add_blocks(direct ? dgamma : partial + blocks * c, blocks, c, dgamma);
  over_blocks(rows, blocks, threads, [&](int64_t, int64_t r0, int64_t r1) {
    k.bn_grad_input(x, dy, c, mean, inv_std, gamma, relu_beta, dbeta, dgamma, inv_rows, r0, r1, dx);
  });
}

void batchnorm_backward(const float* x, const float* dy, int64_t rows, int64_t c,
                        const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta) {
  batchnorm_backward(x, dy, nullptr, rows, c, gamma, mean, inv_std, batch_statistics, dx, dgamma,
                     dbeta, 1);
}

}  // namespace drun::kernels::cpu

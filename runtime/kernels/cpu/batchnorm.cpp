#include "kernels/batchnorm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

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
                             float* moving_var, float* mean, float* inv_std, float* y, bool relu,
                             int threads) {
  const int64_t blocks = sum_blocks(rows, c);
  float partial[kMaxPartialFloats];
  // Too many channels for the partial sums: one block, summed in place.
  const bool direct = 2 * c > kMaxPartialFloats;
  // The mean and the variance in one pass: per block, the sums of d = x - s
  // and of d^2, s being the first row. s lies within a few standard
  // deviations of the mean, so sum(d^2)/n - mean(d)^2 does not cancel the
  // way sum(x^2)/n - mean(x)^2 does when the mean is large; the blocks'
  // sums are combined in double. One read of x fewer than mean-then-variance.
  over_blocks(rows, blocks, threads, [&](int64_t b, int64_t r0, int64_t r1) {
    float* __restrict s1 = direct ? mean : partial + b * c;
    float* __restrict s2 = direct ? inv_std : partial + (blocks + b) * c;
    const float* __restrict sh = x;  // row 0
    for (int64_t j = 0; j < c; ++j) s1[j] = s2[j] = 0.0f;
    for (int64_t r = r0; r < r1; ++r) {
      const float* __restrict xr = x + r * c;
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) {
        const float d = xr[j] - sh[j];
        s1[j] += d;
        s2[j] += d * d;
      }
    }
  });
  const double n = static_cast<double>(rows);
  for (int64_t j = 0; j < c; ++j) {
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
    const double m1 = t1 / n, shift = rows > 0 ? x[j] : 0.0;
    const double v = t2 / n - m1 * m1;  // < 0 only by rounding; NaN stays NaN
    const float var = v < 0.0 ? 0.0f : static_cast<float>(v);
    mean[j] = static_cast<float>(shift + m1);
    inv_std[j] = 1.0f / std::sqrt(var + eps);
    moving_mean[j] = moving_mean[j] * momentum + mean[j] * (1.0f - momentum);
    // Keras 3 moves the variance with the biased batch variance.
    moving_var[j] = moving_var[j] * momentum + var * (1.0f - momentum);
  }
  over_blocks(rows, blocks, threads, [&](int64_t, int64_t r0, int64_t r1) {
    const float* m = mean;
    const float* is = inv_std;
    const float* ga = gamma;
    const float* bt = beta;
    const float floor = relu ? 0.0f : -std::numeric_limits<float>::infinity();
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * c;
      float* yr = y + r * c;
#pragma omp simd
      for (int64_t j = 0; j < c; ++j)
        yr[j] = std::max(floor, (xr[j] - m[j]) * is[j] * ga[j] + bt[j]);
    }
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
  // The passes are written once for both cases, and compiled once each, so
  // that the mask (the gradient at the batch norm's own output is dy where
  // the fused ReLU passed its input, else 0) is a select inside a loop that
  // stays vectorised rather than a test of relu_y per element.
  auto passes = [&](auto masked_tag) {
    constexpr bool kMasked = decltype(masked_tag)::value;
    // The mask is a select on values already in registers: dy is read
    // unconditionally (a load under the condition would be a branch), and
    // every array is reached through a __restrict pointer (with this many,
    // GCC otherwise gives up proving they do not overlap and does not vectorise).
    // Each pass copies the pointers into its own locals: read through the
    // closure, they would be reloaded after every store.
    const float* bt_any = kMasked ? relu_beta : gamma;  // unread when not masked
    over_blocks(rows, blocks, threads, [&](int64_t b, int64_t r0, int64_t r1) {
      const float* __restrict m = mean;
      const float* __restrict is = inv_std;
      const float* __restrict ga = gamma;
      const float* __restrict bt = bt_any;
      const float* xs = x;
      const float* dys = dy;
      float* __restrict sb = direct ? dbeta : partial + b * c;
      float* __restrict sg = direct ? dgamma : partial + (blocks + b) * c;
      for (int64_t j = 0; j < c; ++j) sb[j] = sg[j] = 0.0f;
      for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict xr = xs + r * c;
        const float* __restrict dyr = dys + r * c;
#pragma omp simd
        for (int64_t j = 0; j < c; ++j) {
          const float xc = xr[j] - m[j];
          float d = dyr[j];
          if constexpr (kMasked) d = xc * is[j] * ga[j] + bt[j] > 0.0f ? d : 0.0f;
          sb[j] += d;
          sg[j] += d * xc * is[j];  // grouped as the CUDA kernels
        }
      }
    });
    add_blocks(direct ? dbeta : partial, blocks, c, dbeta);
    add_blocks(direct ? dgamma : partial + blocks * c, blocks, c, dgamma);
    over_blocks(rows, blocks, threads, [&](int64_t, int64_t r0, int64_t r1) {
      const float* __restrict m = mean;
      const float* __restrict is = inv_std;
      const float* __restrict ga = gamma;
      const float* __restrict bt = bt_any;
      const float* __restrict db = dbeta;
      const float* xs = x;
      const float* dys = dy;
      float* dxs = dx;
      const float* __restrict dg = dgamma;
      for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict xr = xs + r * c;
        const float* __restrict dyr = dys + r * c;
        float* __restrict dxr = dxs + r * c;
#pragma omp simd
        for (int64_t j = 0; j < c; ++j) {
          const float xhat = (xr[j] - m[j]) * is[j];
          float d = dyr[j];
          if constexpr (kMasked) d = xhat * ga[j] + bt[j] > 0.0f ? d : 0.0f;
          dxr[j] = ga[j] * is[j] * (d - (db[j] + xhat * dg[j]) * inv_rows);
        }
      }
    });
  };
  if (relu_beta)
    passes(std::true_type{});
  else
    passes(std::false_type{});
}

void batchnorm_backward(const float* x, const float* dy, int64_t rows, int64_t c,
                        const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta) {
  batchnorm_backward(x, dy, nullptr, rows, c, gamma, mean, inv_std, batch_statistics, dx, dgamma,
                     dbeta, 1);
}

}  // namespace drun::kernels::cpu

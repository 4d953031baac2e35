// The fused losses of loss.hpp. Rows of a softmax go one warp per row; the
// elementwise losses are grid-stride maps. Every thread adds its terms in
// double, as the CPU does; each block sums its threads into one partial, and
// one more block adds the partials in order, so the loss is the same on every
// run, and writes the mean into device memory: nothing waits for it here.
#include <cuda_runtime.h>

#include <climits>

#include "kernels/cuda/device.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/loss.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

constexpr int kWarps = kThreads / 32;
// Blocks of a reduction: enough to fill a GPU, few enough for one block to finish.
constexpr int64_t kMaxBlocks = 1024;
constexpr long long kNoRow = LLONG_MAX;
// Keras clips probabilities to [eps, 1 - eps] before taking logs.
constexpr float kEps = 1e-7f;

// blocks_for with the reductions' smaller cap.
int reduce_blocks(int64_t threads) {
  return blocks_for(threads, kMaxBlocks);
}

// std::clamp's comparisons, so that a NaN stays NaN (fminf/fmaxf would drop it).
__device__ float clamp_eps(float p) {
  return p < kEps ? kEps : (1.0f - kEps < p ? 1.0f - kEps : p);
}
__device__ bool inside_eps(float p) {
  return p > kEps && p < 1.0f - kEps;
}

__device__ long long block_min(long long v) {
  __shared__ long long part[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) v = min(v, __shfl_down_sync(kAllLanes, v, offset));
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kWarps ? part[threadIdx.x] : kNoRow;
  if (threadIdx.x < 32)
    for (int offset = 16; offset > 0; offset /= 2)
      v = min(v, __shfl_down_sync(kAllLanes, v, offset));
  return v;
}

// Partial sums (and whether a label was bad, where the loss has labels) of the blocks.
struct Partials {
  double* sums;
  long long* bad_rows;
};

// *loss = the partials' total / divisor; NaN where a row had a bad label.
__global__ void finish_kernel(Partials p, int blocks, bool has_labels, double divisor,
                              float* loss) {
  double s = 0.0;
  long long bad = kNoRow;
  for (int i = threadIdx.x; i < blocks; i += blockDim.x) {
    s += p.sums[i];
    if (has_labels) bad = min(bad, p.bad_rows[i]);
  }
  s = block_sum(s);
  bad = block_min(bad);
  if (threadIdx.x == 0) *loss = bad != kNoRow ? NAN : static_cast<float>(s / divisor);
}

// The loss of an empty batch, as the CPU's: 0 / 0.
__global__ void nan_kernel(float* loss) {
  *loss = NAN;
}

// Runs launch(blocks, partials), then finish_kernel into *loss; returns at once.
template <class Launch>
void reduce(int blocks, bool has_labels, int64_t divisor, float* loss, const char* what,
            Launch launch) {
  if (divisor <= 0) {
    nan_kernel<<<1, 1>>>(loss);
    check_launch(what);
    return;
  }
  Scratch scratch(static_cast<size_t>(blocks) * (sizeof(double) + sizeof(long long)));
  auto* sums = static_cast<double*>(scratch.get());
  const Partials p{sums, reinterpret_cast<long long*>(sums + blocks)};
  launch(blocks, p);
  check_launch(what);
  finish_kernel<<<1, kThreads>>>(p, blocks, has_labels, static_cast<double>(divisor), loss);
  check_launch(what);
}

// One warp per row, rows visited in increasing order, so each warp's first
// bad row is its smallest. The row's loss is added by lane 0 only.
__global__ void softmax_xent_sparse_kernel(const float* logits, const int32_t* labels, int64_t rows,
                                           int64_t cols, float inv_rows, float* grad, Partials p) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  double acc = 0.0;
  long long bad = kNoRow;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const int32_t label = labels[r];
    if (label < 0 || label >= cols) {
      if (bad == kNoRow) bad = r;
      for (int64_t j = lane; j < cols; j += 32) grad[r * cols + j] = 0.0f;
      continue;
    }
    const float* z = logits + r * cols;
    float* g = grad + r * cols;
    const RowExp e = warp_exp_row(z, g, cols, lane);
    const float scale = (1.0f / e.sum) * inv_rows;
    for (int64_t j = lane; j < cols; j += 32) {
      float v = g[j] * scale;
      if (j == label) v -= inv_rows;
      g[j] = v;
    }
    if (lane == 0) acc += static_cast<double>(logf(e.sum) + e.max - z[label]);
  }
  acc = block_sum(acc);
  bad = block_min(bad);
  if (threadIdx.x == 0) {
    p.sums[blockIdx.x] = acc;
    p.bad_rows[blockIdx.x] = bad;
  }
}

// The whole gradient row is written, zeros but at the label (all zeros for a bad label).
__global__ void xent_sparse_probs_kernel(const float* probs, const int32_t* labels, int64_t rows,
                                         int64_t cols, float inv_rows, float* grad, Partials p) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  double acc = 0.0;
  long long bad = kNoRow;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const int32_t label = labels[r];
    const bool ok = label >= 0 && label < cols;
    if (!ok && bad == kNoRow) bad = r;
    float at_label = 0.0f;
    if (ok) {
      const float pl = probs[r * cols + label];
      at_label = inside_eps(pl) ? -inv_rows / pl : 0.0f;
      if (lane == 0) acc -= log(static_cast<double>(clamp_eps(pl)));
    }
    float* g = grad + r * cols;
    for (int64_t j = lane; j < cols; j += 32) g[j] = j == label ? at_label : 0.0f;
  }
  acc = block_sum(acc);
  bad = block_min(bad);
  if (threadIdx.x == 0) {
    p.sums[blockIdx.x] = acc;
    p.bad_rows[blockIdx.x] = bad;
  }
}

__global__ void softmax_xent_dense_kernel(const float* logits, const float* targets, int64_t rows,
                                          int64_t cols, float inv_rows, float* grad, Partials p) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = grid_stride() / 32;
  double acc = 0.0;
  for (int64_t r = first_index() / 32; r < rows; r += warps) {
    const float* z = logits + r * cols;
    const float* t = targets + r * cols;
    float* g = grad + r * cols;
    float m = -INFINITY;
    for (int64_t j = lane; j < cols; j += 32) m = fmaxf(m, z[j]);
    m = warp_max(m);
    float sum = 0.0f, tsum = 0.0f;
    for (int64_t j = lane; j < cols; j += 32) {
      const float e = expf(z[j] - m);
      g[j] = e;
      sum += e;
      tsum += t[j];
    }
    sum = warp_sum(sum);
    tsum = warp_sum(tsum);
    const float lse = logf(sum) + m;
    const float inv = 1.0f / sum;
    for (int64_t j = lane; j < cols; j += 32) {
      acc += static_cast<double>(t[j] * (lse - z[j]));
      g[j] = (g[j] * inv * tsum - t[j]) * inv_rows;
    }
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) p.sums[blockIdx.x] = acc;
}

__global__ void xent_dense_probs_kernel(const float* probs, const float* targets, int64_t n,
                                        float inv_rows, float* grad, Partials p) {
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float q = probs[i];
    acc -= static_cast<double>(targets[i]) * log(static_cast<double>(clamp_eps(q)));
    grad[i] = inside_eps(q) ? -targets[i] / q * inv_rows : 0.0f;
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) p.sums[blockIdx.x] = acc;
}

// max(z, 0) - z t + log(1 + e^-|z|) is stable for large |z|; max as std::max
// does it (a NaN z stays NaN).
__global__ void sigmoid_bce_kernel(const float* logits, const float* targets, int64_t n,
                                   float inv_n, float* grad, Partials p) {
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float z = logits[i], t = targets[i];
    const float relu = z < 0.0f ? 0.0f : z;
    acc += static_cast<double>(relu - z * t + log1pf(expf(-fabsf(z))));
    grad[i] = (1.0f / (1.0f + expf(-z)) - t) * inv_n;
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) p.sums[blockIdx.x] = acc;
}

__global__ void bce_probs_kernel(const float* probs, const float* targets, int64_t n, float inv_n,
                                 float* grad, Partials p) {
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float q = clamp_eps(probs[i]), t = targets[i];
    acc -= static_cast<double>(t * logf(q) + (1.0f - t) * logf(1.0f - q));
    grad[i] = inside_eps(probs[i]) ? (q - t) / (q * (1.0f - q)) * inv_n : 0.0f;
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) p.sums[blockIdx.x] = acc;
}

__global__ void mse_kernel(const float* pred, const float* targets, int64_t n, float scale,
                           float* grad, Partials p) {
  double acc = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float d = pred[i] - targets[i];
    acc += static_cast<double>(d) * d;
    grad[i] = d * scale;
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) p.sums[blockIdx.x] = acc;
}

}  // namespace

// Each launches its kernel and finish_kernel; an empty input writes NaN, as the CPU's 0 / 0.

void softmax_xent_sparse(const float* logits, const int32_t* labels, int64_t rows, int64_t cols,
                         float* grad, float* loss) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
  reduce(reduce_blocks(rows * 32), true, rows, loss, "softmax_xent_sparse",
         [&](int blocks, Partials p) {
           softmax_xent_sparse_kernel<<<blocks, kThreads>>>(logits, labels, rows, cols, inv_rows,
                                                            grad, p);
         });
}

void xent_sparse_probs(const float* probs, const int32_t* labels, int64_t rows, int64_t cols,
                       float* grad, float* loss) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
  reduce(reduce_blocks(rows * 32), true, rows, loss, "xent_sparse_probs",
         [&](int blocks, Partials p) {
           xent_sparse_probs_kernel<<<blocks, kThreads>>>(probs, labels, rows, cols, inv_rows, grad,
                                                          p);
         });
}

void softmax_xent_dense(const float* logits, const float* targets, int64_t rows, int64_t cols,
                        float* grad, float* loss) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
  reduce(reduce_blocks(rows * 32), false, rows, loss, "softmax_xent_dense",
         [&](int blocks, Partials p) {
           softmax_xent_dense_kernel<<<blocks, kThreads>>>(logits, targets, rows, cols, inv_rows,
                                                           grad, p);
         });
}

void xent_dense_probs(const float* probs, const float* targets, int64_t rows, int64_t cols,
                      float* grad, float* loss) {
  const int64_t n = rows * cols;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  reduce(reduce_blocks(n), false, n > 0 ? rows : 0, loss, "xent_dense_probs",
         [&](int blocks, Partials p) {
           xent_dense_probs_kernel<<<blocks, kThreads>>>(probs, targets, n, inv_rows, grad, p);
         });
}

void sigmoid_bce(const float* logits, const float* targets, int64_t n, float* grad, float* loss) {
  const float inv_n = 1.0f / static_cast<float>(n);
  reduce(reduce_blocks(n), false, n, loss, "sigmoid_bce", [&](int blocks, Partials p) {
    sigmoid_bce_kernel<<<blocks, kThreads>>>(logits, targets, n, inv_n, grad, p);
  });
}

void bce_probs(const float* probs, const float* targets, int64_t n, float* grad, float* loss) {
  const float inv_n = 1.0f / static_cast<float>(n);
  reduce(reduce_blocks(n), false, n, loss, "bce_probs", [&](int blocks, Partials p) {
    bce_probs_kernel<<<blocks, kThreads>>>(probs, targets, n, inv_n, grad, p);
  });
}

void mse(const float* pred, const float* targets, int64_t n, float* grad, float* loss) {
  const float scale = 2.0f / static_cast<float>(n);
  reduce(reduce_blocks(n), false, n, loss, "mse", [&](int blocks, Partials p) {
    mse_kernel<<<blocks, kThreads>>>(pred, targets, n, scale, grad, p);
  });
}

}  // namespace drun::kernels::cuda

// The counts of metric_counts.hpp. One block per count (or per group of
// counts) loops over the batch and adds its threads' terms with block_sum:
// no atomics and no memset, so the counts are the same on every run and a
// captured step replays them as they are.
#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/metric_counts.hpp"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

// The first maximum of a row, one thread.
__device__ int32_t row_argmax(const float* row, int64_t cols) {
  int32_t at = 0;
  for (int64_t c = 1; c < cols; ++c)
    if (row[c] > row[at]) at = static_cast<int32_t>(c);
  return at;
}

// One block; each thread takes rows.
__global__ void top_k_kernel(const float* pred, const int32_t* labels, const float* targets,
                             int64_t rows, int64_t cols, int k, float* sum) {
  double hits = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    const float* row = pred + r * cols;
    const int32_t want = targets ? row_argmax(targets + r * cols, cols) : labels[r];
    if (want < 0 || want >= cols) continue;
    float at = row[want];
    if (isnan(at)) at = -INFINITY;
    int64_t above = 0;
    for (int64_t c = 0; c < cols; ++c) above += row[c] > at ? 1 : 0;
    if (above < k) hits += 1.0;
  }
  hits = block_sum(hits);
  if (threadIdx.x == 0) *sum = static_cast<float>(hits);
}

// Block t < T: threshold t's true and false positives; block T: the positives and negatives.
__global__ void threshold_kernel(const float* pred, const float* targets, int64_t n, Thresholds th,
                                 float* counts) {
  const int t = blockIdx.x;
  double tp = 0.0, fp = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const bool above = t == th.count || pred[i] > th.at[t];
    if (!above) continue;
    if (targets[i] != 0.0f)
      tp += 1.0;
    else
      fp += 1.0;
  }
  // block_sum once per kernel: the two counts travel as one double (both
  // are whole numbers below 2^24, so tp * 2^25 + fp is exact).
  const double both = block_sum(tp * 33554432.0 + fp);
  if (threadIdx.x != 0) return;
  const double hi = floor(both / 33554432.0);
  const int at = t == th.count ? 2 * th.count : t;
  counts[at] = static_cast<float>(hi);
  counts[t == th.count ? at + 1 : th.count + t] = static_cast<float>(both - hi * 33554432.0);
}

// Block b: bucket b's positives and negatives.
__global__ void bucket_kernel(const float* pred, const float* targets, int64_t n, int64_t buckets,
                              float* counts) {
  const int64_t b = blockIdx.x;
  const float scale = static_cast<float>(buckets - 1);
  double pos = 0.0, neg = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float p = fminf(fmaxf(pred[i], 0.0f), 1.0f);
    const float up = ceilf(__fmul_rn(p, scale));
    const int64_t at = isnan(up) ? 0 : max(static_cast<int64_t>(up) - 1, int64_t{0});
    if (at != b) continue;
    if (targets[i] != 0.0f)
      pos += 1.0;
    else
      neg += 1.0;
  }
  const double both = block_sum(pos * 33554432.0 + neg);
  if (threadIdx.x != 0) return;
  const double hi = floor(both / 33554432.0);
  counts[b] = static_cast<float>(hi);
  counts[buckets + b] = static_cast<float>(both - hi * 33554432.0);
}

// Block (c, k): count k of class c over every row (k: 0 tp, 1 fp, 2 fn, 3 targets).
__global__ void class_kernel(const float* pred, const float* targets, int64_t rows, int64_t cols,
                             bool argmax, float threshold, float* counts) {
  const int64_t c = blockIdx.x;
  const int kind = blockIdx.y;
  double acc = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    const float* p = pred + r * cols;
    const double want = targets[r * cols + c];
    double y;
    if (argmax) {
      float top = p[0];
      for (int64_t j = 1; j < cols; ++j) top = fmaxf(top, p[j]);
      y = p[c] >= top && fabsf(p[c]) > 1e-9f ? 1.0 : 0.0;
    } else {
      y = p[c] > threshold ? 1.0 : 0.0;
    }
    acc += kind == 0   ? y * want
           : kind == 1 ? y * (1.0 - want)
           : kind == 2 ? (1.0 - y) * want
                       : want;
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) counts[kind * cols + c] = static_cast<float>(acc);
}

}  // namespace

void top_k_hits(const float* pred, const int32_t* labels, const float* targets, int64_t rows,
                int64_t cols, int k, float* sum) {
  top_k_kernel<<<1, kThreads>>>(pred, labels, targets, rows, cols, k, sum);
  check_launch("top_k_hits");
}

void threshold_counts(const float* pred, const float* targets, int64_t n, Thresholds th,
                      float* counts) {
  threshold_kernel<<<th.count + 1, kThreads>>>(pred, targets, n, th, counts);
  check_launch("threshold_counts");
}

void bucket_counts(const float* pred, const float* targets, int64_t n, int64_t buckets,
                   float* counts) {
  bucket_kernel<<<static_cast<unsigned>(buckets), kThreads>>>(pred, targets, n, buckets, counts);
  check_launch("bucket_counts");
}

void class_counts(const float* pred, const float* targets, int64_t rows, int64_t cols, bool argmax,
                  float threshold, float* counts) {
  class_kernel<<<dim3(static_cast<unsigned>(cols), 4), kThreads>>>(pred, targets, rows, cols,
                                                                   argmax, threshold, counts);
  check_launch("class_counts");
}

}  // namespace drun::kernels::cuda

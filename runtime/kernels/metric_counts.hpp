// Metrics that are ratios of counts (top-k accuracy, precision, recall, AUC,
// F1): each batch writes its counts on its own device, the host adds them up
// over an epoch and over workers, and the metric is derived from the totals
// once (nn/metrics.cpp). Counts of 0/1 targets are whole numbers, exact in
// float32 up to 2^24 per batch and in the host's doubles, so any split of
// the data over workers gives the same totals.
// One declaration for both backends: kernels/cpu/metric_counts.cpp on host
// pointers, kernels/cuda/metric_counts.cu on device pointers.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(
    // *sum = the rows whose label (labels, or where targets is not null the
    // target row's first maximum) has fewer than k predictions above its own,
    // Keras' in_top_k (a NaN at the label ranks last).
    void top_k_hits(const float* pred, const int32_t* labels, const float* targets, int64_t rows,
                    int64_t cols, int k, float* sum);
    // For each threshold t of th: counts[t] = values above it whose target is
    // not 0 (true positives), counts[T + t] = those whose target is 0 (false
    // positives); counts[2T], counts[2T + 1] = the values whose target is not
    // 0, is 0 (T = th.count).
    void threshold_counts(const float* pred, const float* targets, int64_t n, Thresholds th,
                          float* counts);
    // Keras' AUC buckets (metrics_utils' evenly spaced thresholds): a value p
    // falls in bucket max(ceil(clip(p, 0, 1) * (buckets - 1)) - 1, 0), in
    // float32; counts[b] = the values of bucket b whose target is not 0,
    // counts[buckets + b] = those whose target is 0.
    void bucket_counts(const float* pred, const float* targets, int64_t n, int64_t buckets,
                       float* counts);
    // F1's per-class sums over rows of (rows, cols): with y = 1 where the
    // prediction is above threshold (argmax: where it is its row's maximum
    // and not 0, as Keras' F1Score without a threshold), else 0, and t the
    // target: counts[c] = sum y t, counts[C + c] = sum y (1 - t),
    // counts[2C + c] = sum (1 - y) t, counts[3C + c] = sum t (C = cols).
    void class_counts(const float* pred, const float* targets, int64_t rows, int64_t cols,
                      bool argmax, float threshold, float* counts);)

}  // namespace drun::kernels

// Losses fused with their gradient: each returns the mean loss over the batch
// (as Keras reduces it) and writes d(mean loss)/d(pred) into `grad` (scaled by 1/rows).
//   pred (rows, cols); sparse labels (rows) int32; dense targets (rows, cols).
// One declaration for both backends: kernels/cpu/loss.cpp on host pointers,
// kernels/cuda/loss.cu on device pointers (each of those synchronizes, since
// the loss and bad_row, a host pointer, come back to the host).
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(
    // Softmax + cross-entropy on logits with integer labels. Labels outside
    // [0, cols) are reported by returning the first bad row (else -1) in
    // *bad_row; the GPU leaves the gradient rows of bad labels untouched.
    double softmax_xent_sparse(const float* logits, const int32_t* labels, int64_t rows,
                               int64_t cols, float* grad, int64_t* bad_row);
    // Cross-entropy on probabilities (already softmaxed) with integer labels.
    double xent_sparse_probs(const float* probs, const int32_t* labels, int64_t rows, int64_t cols,
                             float* grad, int64_t* bad_row);
    // Dense (one-hot or soft) targets, from logits or from probabilities.
    double softmax_xent_dense(const float* logits, const float* targets, int64_t rows, int64_t cols,
                              float* grad);
    double xent_dense_probs(const float* probs, const float* targets, int64_t rows, int64_t cols,
                            float* grad);
    // Binary cross-entropy, elementwise, mean over all rows*cols values.
    double sigmoid_bce(const float* logits, const float* targets, int64_t n, float* grad);
    double bce_probs(const float* probs, const float* targets, int64_t n, float* grad);
    // Mean squared error over all values.
    double mse(const float* pred, const float* targets, int64_t n, float* grad);)

}  // namespace drun::kernels

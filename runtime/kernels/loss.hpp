// Losses fused with their gradient: each writes the mean loss over the batch
// (as Keras reduces it) into *loss and d(mean loss)/d(pred) into `grad`
// (scaled by 1/rows).
//   pred (rows, cols); sparse labels (rows) int32; dense targets (rows, cols).
// One declaration for both backends: kernels/cpu/loss.cpp on host pointers,
// kernels/cuda/loss.cu on device pointers, `loss` included, so that the GPU's
// step never waits for the loss: it is read when someone asks for it
// (train/running_values).
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(
    // Softmax + cross-entropy on logits with integer labels. A label outside
    // [0, cols) gets a zero gradient row and makes the loss NaN (nn::Loss
    // checks labels on the host before; this keeps memory safe).
    void softmax_xent_sparse(const float* logits, const int32_t* labels, int64_t rows, int64_t cols,
                             float* grad, float* loss);
    // Cross-entropy on probabilities (already softmaxed) with integer labels.
    void xent_sparse_probs(const float* probs, const int32_t* labels, int64_t rows, int64_t cols,
                           float* grad, float* loss);
    // Dense (one-hot or soft) targets, from logits or from probabilities.
    void softmax_xent_dense(const float* logits, const float* targets, int64_t rows, int64_t cols,
                            float* grad, float* loss);
    void xent_dense_probs(const float* probs, const float* targets, int64_t rows, int64_t cols,
                          float* grad, float* loss);
    // Binary cross-entropy, elementwise, mean over all rows*cols values.
    void sigmoid_bce(const float* logits, const float* targets, int64_t n, float* grad,
                     float* loss);
    void bce_probs(const float* probs, const float* targets, int64_t n, float* grad, float* loss);
    // Mean squared error over all values.
    void mse(const float* pred, const float* targets, int64_t n, float* grad, float* loss);)

}  // namespace drun::kernels

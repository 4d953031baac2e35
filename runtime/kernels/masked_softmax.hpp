// Attention's softmax over each row of `cols` scores: y = softmax(scale * x),
// with `causal` leaving out column j of row i where j > i, i the row's index
// within its group of t rows (a (t, cols) score matrix per head), as Keras'
// MultiHeadAttention(use_causal_mask=True) masks: query i sees keys 0..i.
// Left-out columns get 0, the rest sum to 1. Fused, as the layer would
// otherwise take a pass each to scale, to mask and to normalise.
// Backward: dx = scale * y * (dy - sum(dy * y)) (the masked y are 0, so are
// their dx). One declaration for both backends: kernels/cpu/masked_softmax.cpp
// on host pointers, kernels/cuda/masked_softmax.cu on device pointers.
#pragma once
#include <cstdint>

#include "kernels/host_device.hpp"
#include "kernels/types.hpp"

namespace drun::kernels {

// The columns row r keeps: all, or 0..i with i = r mod t (at least one, so
// no row is empty: Keras' mask keeps the diagonal even where t > cols).
DRUN_HOST_DEVICE inline int64_t masked_softmax_kept(bool causal, int64_t t, int64_t r,
                                                    int64_t cols) {
  if (!causal) return cols;
  const int64_t i = r % t + 1;
  return i < cols ? i : cols;
}

DRUN_CPU_AND_CUDA(
    // x and y may alias.
    void masked_softmax_forward(float scale, bool causal, int64_t t, const float* x, float* y,
                                int64_t rows, int64_t cols);
    // dy and dx may alias.
    void masked_softmax_backward(float scale, const float* y, const float* dy, float* dx,
                                 int64_t rows, int64_t cols);)

}  // namespace drun::kernels

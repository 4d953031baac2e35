// Activations and their backward passes, on `rows` rows of `cols` values
// (softmax works over each row; the others elementwise). One declaration for
// both backends: kernels/cpu/activation.cpp on host pointers,
// kernels/cuda/activation.cu on device pointers (launched on the default
// stream, returning at once). Both run the functors of
// kernels/activation_list.hpp.
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(
    // y = act(x); x and y may alias.
    void activation_forward(ActivationFn a, const float* x, float* y, int64_t rows, int64_t cols);
    // dx = dy * act'(x), from the forward's output y and, where the activation
    // reads it (a.reads_input()), its input x (else x may be null); dx and dy
    // may alias.
    void activation_backward(ActivationFn a, const float* x, const float* y, const float* dy,
                             float* dx, int64_t rows, int64_t cols);)

}  // namespace drun::kernels

// Activations and their backward passes on the GPU, mirroring
// kernels/cpu/activation.hpp on device pointers (the same aliasing rules).
// Each launches on the default stream and returns at once.
#pragma once
#include <cstdint>

#include "kernels/cpu/activation.hpp"

namespace drun::kernels::cuda {

using cpu::Activation;

// y = act(x); x and y may alias.
void activation_forward(Activation a, const float* x, float* y, int64_t rows, int64_t cols);
// dx = dy * act'(x) expressed through y; dx and dy may alias.
void activation_backward(Activation a, const float* y, const float* dy, float* dx, int64_t rows,
                         int64_t cols);

}  // namespace drun::kernels::cuda

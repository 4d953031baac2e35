// Elementwise activations and their backward passes, computed from the
// forward output y (every activation here has a derivative expressible in y).
// Softmax works over the last dimension: `rows` rows of `cols` values.
#pragma once
#include <cstdint>

namespace drun::kernels::cpu {

enum class Activation { linear, relu, sigmoid, tanh, softmax };

// y = act(x); x and y may alias.
void activation_forward(Activation a, const float* x, float* y, int64_t rows, int64_t cols);
// dx = dy * act'(x) expressed through y; dx and dy may alias.
void activation_backward(Activation a, const float* y, const float* dy, float* dx, int64_t rows,
                         int64_t cols);

}  // namespace drun::kernels::cpu

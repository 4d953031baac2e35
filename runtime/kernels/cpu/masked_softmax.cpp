// kernels/masked_softmax.hpp on the CPU: the CPU's own variant
// (isa/masked_softmax_impl.hpp), vectors of its width along each row.
#include "kernels/masked_softmax.hpp"

#include "kernels/cpu/cpu_kernels.hpp"

namespace drun::kernels::cpu {

void masked_softmax_forward(float scale, bool causal, int64_t t, const float* x, float* y,
                            int64_t rows, int64_t cols) {
  cpu_kernels().masked_softmax_forward(scale, causal, t, x, y, rows, cols);
}

void masked_softmax_backward(float scale, const float* y, const float* dy, float* dx, int64_t rows,
                             int64_t cols) {
  cpu_kernels().masked_softmax_backward(scale, y, dy, dx, rows, cols);
}

}  // namespace drun::kernels::cpu

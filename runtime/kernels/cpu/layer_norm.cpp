// Layer normalisation on the CPU (kernels/layer_norm.hpp): the CPU's own
// variant (isa/layer_norm_impl.hpp), vectors of its width along each row.
// ops_cpu.cpp splits the rows over threads.
#include "kernels/layer_norm.hpp"

#include "kernels/cpu/cpu_kernels.hpp"

namespace drun::kernels::cpu {

void layer_norm_forward(const float* x, int64_t rows, int64_t c, const float* gamma,
                        const float* beta, float eps, float* mean, float* inv_std, float* y) {
  cpu_kernels().layer_norm_forward(x, rows, c, gamma, beta, eps, mean, inv_std, y);
}

void layer_norm_backward_input(const float* x, const float* dy, int64_t rows, int64_t c,
                               const float* gamma, const float* mean, const float* inv_std,
                               float* dx) {
  cpu_kernels().layer_norm_backward_input(x, dy, rows, c, gamma, mean, inv_std, dx);
}

void layer_norm_param_grads(const float* x, const float* dy, int64_t rows, int64_t c,
                            const float* mean, const float* inv_std, float* dgamma, float* dbeta) {
  cpu_kernels().layer_norm_param_grads(x, dy, rows, c, mean, inv_std, 0, c, dgamma, dbeta);
}

}  // namespace drun::kernels::cpu

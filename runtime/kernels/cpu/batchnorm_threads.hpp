// The CPU's batch normalisation on `threads` threads (kernels/batchnorm.hpp
// gives the one-thread form both backends share). Per-channel sums are taken
// over fixed blocks of rows and added in block order, so the result is the
// same whatever the thread count.
#pragma once
#include <cstdint>

namespace drun::kernels::cpu {

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y, int threads);
void batchnorm_backward(const float* x, const float* dy, int64_t rows, int64_t c,
                        const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta, int threads);

}  // namespace drun::kernels::cpu

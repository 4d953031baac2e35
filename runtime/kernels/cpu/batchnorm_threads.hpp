// The CPU's batch normalisation on `threads` threads, with a following ReLU
// fused where asked (kernels/batchnorm.hpp gives the one-thread, unfused form
// both backends share; op_list.hpp the meaning of relu and relu_y). Per-channel sums are taken
// over fixed blocks of rows and added in block order, so the result is the
// same whatever the thread count.
#pragma once
#include <cstdint>

namespace drun::kernels::cpu {

// moments: null, or `images` images' moments of x (image_moments' layout,
// images x 2 x c), combined into the batch statistics instead of a pass over x.
void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y, bool relu,
                             int threads, const float* moments = nullptr, int64_t images = 0);
// One image's moments over its `pixels` rows of c channels: the per-channel
// mean and the sum of squared deviations from it (what batch norm combines).
void image_moments(const float* y, int64_t pixels, int64_t c, float* mean, float* m2);
void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, const float* moving_mean,
                             const float* moving_var, float* y, bool relu);
// relu_beta: null, or beta when a ReLU was fused into the forward; dy is then
// masked where (x - mean) inv_std gamma + relu_beta <= 0 (the forward's
// expression, so the mask is the forward's without reading its output).
void batchnorm_backward(const float* x, const float* dy, const float* relu_beta, int64_t rows,
                        int64_t c, const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta, int threads);

}  // namespace drun::kernels::cpu

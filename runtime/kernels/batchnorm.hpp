// Batch normalisation over the last (channel) axis of `rows` x `c` values
// (rows = N*H*W for NHWC images). One declaration for both backends:
// kernels/cpu/batchnorm.cpp on host pointers, kernels/cuda/batchnorm.cu on
// device pointers (launched on the default stream, returning at once; the
// same formulas, with the per-channel sums in double, so they can only be
// closer to exact than the CPU's float sums).
#pragma once
#include <cstdint>

#include "kernels/types.hpp"

namespace drun::kernels {

DRUN_CPU_AND_CUDA(
    // Training: normalises with the batch statistics, writes them to
    // mean/inv_std (kept for backward) and moves the moving statistics by
    // `momentum`, as Keras.
    void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                                 const float* beta, float eps, float momentum, float* moving_mean,
                                 float* moving_var, float* mean, float* inv_std, float* y);
    void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                                 const float* beta, float eps, const float* moving_mean,
                                 const float* moving_var, float* y);
    // dx, dgamma, dbeta overwritten; x is the forward input. With
    // batch_statistics the mean and variance depend on x (training);
    // otherwise they are constants.
    void batchnorm_backward(const float* x, const float* dy, int64_t rows, int64_t c,
                            const float* gamma, const float* mean, const float* inv_std,
                            bool batch_statistics, float* dx, float* dgamma, float* dbeta);)

namespace cuda {
// The forwards with a ReLU after the normalisation, in the same pass (the CPU
// has its own, kernels/cpu/batchnorm_threads.hpp).
void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y, bool relu);
void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, const float* moving_mean,
                             const float* moving_var, float* y, bool relu);
}  // namespace cuda

}  // namespace drun::kernels

// Batch-norm kernels (see batchnorm.hpp). Per-channel sums over the rows run
// in two deterministic passes: blocks of (channels x row groups) over a
// channel tile and a slice of the rows each write one double per channel,
// then one block per channel tile adds those slices up in a fixed order and
// applies the CPU's per-channel formula. No atomics, so a rerun gives the
// same bits. Both loops over rows or slices are unrolled: each thread then
// has several loads in flight instead of waiting for one before the next
// (the sums keep their order). Elementwise formulas use the __f*_rn intrinsics: they are
// evaluated exactly as written, as on the CPU, without nvcc's FMA fusion.
#include <cuda_runtime.h>

#include "kernels/activation_list.hpp"
#include "kernels/batchnorm.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/launch.cuh"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

// Enough resident blocks of kThreads to fill the largest GPUs (132 SMs x 8).
constexpr int64_t kTargetBlocks = 1024;
// Rows each thread should sum at least before a further split pays off.
constexpr int64_t kMinRowsPerThread = 16;

// How the per-channel sums split the work: blocks of tx channels x ty row
// groups (tx a power of two up to a warp, so that a warp reads 128 contiguous
// bytes even when c < 32), over channel tiles x row slices.
struct Reduction {
  int tx, ty;
  int64_t tiles, slices, rows_per_slice;
};

Reduction plan(int64_t rows, int64_t c) {
  Reduction p{};
  p.tx = 1;
  while (p.tx < 32 && p.tx < c) p.tx *= 2;
  p.ty = kThreads / p.tx;
  p.tiles = (c + p.tx - 1) / p.tx;
  int64_t slices = (kTargetBlocks + p.tiles - 1) / p.tiles;
  const int64_t useful = (rows + p.ty * kMinRowsPerThread - 1) / (p.ty * kMinRowsPerThread);
  if (slices > useful) slices = useful;
  if (slices < 1) slices = 1;
  p.rows_per_slice = (rows + slices - 1) / slices;
  if (p.rows_per_slice < 1) p.rows_per_slice = 1;
  p.slices = (rows + p.rows_per_slice - 1) / p.rows_per_slice;
  if (p.slices < 1) p.slices = 1;
  return p;
}

// Sums each thread's K values over the block's row groups (threadIdx.y) by a
// shared-memory tree; the totals end up in row group 0.
template <int K>
__device__ void reduce_row_groups(double (&acc)[K]) {
  __shared__ double sh[K][kThreads];
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  for (int k = 0; k < K; ++k) sh[k][t] = acc[k];
  __syncthreads();
  for (int s = blockDim.y / 2; s > 0; s >>= 1) {
    if (threadIdx.y < s)
      for (int k = 0; k < K; ++k) sh[k][t] += sh[k][t + s * blockDim.x];
    __syncthreads();
  }
  for (int k = 0; k < K; ++k) acc[k] = sh[k][t];
}

// partial[k][slice][j] = sum over the slice's rows r of Term's k-th value at
// element (r, j).
template <int K, class Term>
__global__ void partial_sums_kernel(Term term, int64_t rows, int64_t c, int64_t rows_per_slice,
                                    double* __restrict__ partial) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t r0 = blockIdx.y * rows_per_slice;
  const int64_t r1 = r0 + rows_per_slice < rows ? r0 + rows_per_slice : rows;
  double acc[K] = {};
  if (j < c)
#pragma unroll 4
    for (int64_t r = r0 + threadIdx.y; r < r1; r += blockDim.y) term(r * c + j, j, acc);
  reduce_row_groups<K>(acc);
  if (threadIdx.y == 0 && j < c)
    for (int k = 0; k < K; ++k) partial[(k * gridDim.y + blockIdx.y) * c + j] = acc[k];
}

// Adds the slices of partial_sums_kernel (in slice order) and hands each
// channel's K totals to Finish.
template <int K, class Finish>
__global__ void finish_sums_kernel(Finish finish, const double* __restrict__ partial,
                                   int64_t slices, int64_t c) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  double acc[K] = {};
  if (j < c)
#pragma unroll 8
    for (int64_t s = threadIdx.y; s < slices; s += blockDim.y)
      for (int k = 0; k < K; ++k) acc[k] += partial[(k * slices + s) * c + j];
  reduce_row_groups<K>(acc);
  if (threadIdx.y == 0 && j < c) finish(j, acc);
}

// Per-channel sums of Term's K values over all rows, handed to Finish.
template <int K, class Term, class Finish>
void channel_sums(const Reduction& p, int64_t rows, int64_t c, Term term, Finish finish,
                  const char* what) {
  Scratch partial(sizeof(double) * K * p.slices * c);
  double* part = static_cast<double*>(partial.get());
  const dim3 block(p.tx, p.ty);
  partial_sums_kernel<K>
      <<<dim3(static_cast<unsigned>(p.tiles), static_cast<unsigned>(p.slices)), block>>>(
          term, rows, c, p.rows_per_slice, part);
  check_launch(what);
  finish_sums_kernel<K><<<static_cast<unsigned>(p.tiles), block>>>(finish, part, p.slices, c);
  check_launch(what);
}

struct SumX {
  const float* x;
  __device__ void operator()(int64_t i, int64_t, double (&acc)[1]) const { acc[0] += x[i]; }
};

struct SetMean {
  float* mean;
  double rows;
  __device__ void operator()(int64_t j, const double (&sum)[1]) const {
    mean[j] = static_cast<float>(sum[0] / rows);
  }
};

// The CPU's deviation is a float difference; only its square is summed wider.
struct SumSquaredDeviation {
  const float* x;
  const float* mean;
  __device__ void operator()(int64_t i, int64_t j, double (&acc)[1]) const {
    const double d = __fsub_rn(x[i], mean[j]);
    acc[0] += d * d;
  }
};

struct SetVariance {
  const float* mean;
  float* inv_std;
  float* moving_mean;
  float* moving_var;
  float eps, momentum;
  double rows;
  __device__ void operator()(int64_t j, const double (&sum)[1]) const {
    const float var = static_cast<float>(sum[0] / rows);
    inv_std[j] = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(var, eps)));
    const float keep = momentum, take = __fsub_rn(1.0f, momentum);
    moving_mean[j] = __fadd_rn(__fmul_rn(moving_mean[j], keep), __fmul_rn(mean[j], take));
    // Keras 3 moves the variance with the biased batch variance.
    moving_var[j] = __fadd_rn(__fmul_rn(moving_var[j], keep), __fmul_rn(var, take));
  }
};

// dbeta's and dgamma's terms; dgamma's product is rounded in float, as on the CPU.
struct SumGradTerms {
  const float* x;
  const float* dy;
  const float* mean;
  const float* inv_std;
  __device__ void operator()(int64_t i, int64_t j, double (&acc)[2]) const {
    const float d = dy[i];
    acc[0] += d;
    acc[1] += __fmul_rn(__fmul_rn(d, __fsub_rn(x[i], mean[j])), inv_std[j]);
  }
};

struct SetGrads {
  float* dgamma;
  float* dbeta;
  __device__ void operator()(int64_t j, const double (&sum)[2]) const {
    dbeta[j] = static_cast<float>(sum[0]);
    dgamma[j] = static_cast<float>(sum[1]);
  }
};

// y = xhat gamma + beta, then max(0, y) with kRelu (std::max(0, y) on the CPU).
template <bool kRelu>
__device__ float normalized(float v) {
  return kRelu ? act::Relu{}.forward(v) : v;
}

template <bool kRelu>
__global__ void normalize_kernel(const float* x, int64_t total, int64_t c,
                                 const float* __restrict__ gamma, const float* __restrict__ beta,
                                 const float* __restrict__ mean, const float* __restrict__ inv_std,
                                 float* y) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t j = i % c;
    const float xhat = __fmul_rn(__fsub_rn(x[i], mean[j]), inv_std[j]);
    y[i] = normalized<kRelu>(__fadd_rn(__fmul_rn(xhat, gamma[j]), beta[j]));
  }
}

template <bool kRelu>
__global__ void infer_kernel(const float* x, int64_t total, int64_t c,
                             const float* __restrict__ gamma, const float* __restrict__ beta,
                             float eps, const float* __restrict__ moving_mean,
                             const float* __restrict__ moving_var, float* y) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t j = i % c;
    const float xhat =
        __fdiv_rn(__fsub_rn(x[i], moving_mean[j]), __fsqrt_rn(__fadd_rn(moving_var[j], eps)));
    y[i] = normalized<kRelu>(__fadd_rn(__fmul_rn(xhat, gamma[j]), beta[j]));
  }
}

// dx = gamma inv_std (dy - (dbeta + xhat dgamma) inv_rows), grouped as the CPU.
__global__ void backward_dx_kernel(const float* x, const float* dy, int64_t total, int64_t c,
                                   const float* __restrict__ gamma, const float* __restrict__ mean,
                                   const float* __restrict__ inv_std,
                                   const float* __restrict__ dgamma,
                                   const float* __restrict__ dbeta, float inv_rows, float* dx) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t j = i % c;
    const float xhat = __fmul_rn(__fsub_rn(x[i], mean[j]), inv_std[j]);
    const float shift = __fmul_rn(__fadd_rn(dbeta[j], __fmul_rn(xhat, dgamma[j])), inv_rows);
    dx[i] = __fmul_rn(__fmul_rn(gamma[j], inv_std[j]), __fsub_rn(dy[i], shift));
  }
}

}  // namespace

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y, bool relu) {
  if (c == 0) return;
  const Reduction p = plan(rows, c);
  const double n = static_cast<double>(rows);
  // With no rows the sums are 0 and 0 / 0 gives NaN statistics, as the CPU's
  // 0 * (1 / 0.0f).
  channel_sums<1>(p, rows, c, SumX{x}, SetMean{mean, n}, "batchnorm_forward_train (mean)");
  channel_sums<1>(p, rows, c, SumSquaredDeviation{x, mean},
                  SetVariance{mean, inv_std, moving_mean, moving_var, eps, momentum, n},
                  "batchnorm_forward_train (variance)");
  const int64_t total = rows * c;
  if (total == 0) return;
  if (relu)
    normalize_kernel<true>
        <<<blocks_for(total), kThreads>>>(x, total, c, gamma, beta, mean, inv_std, y);
  else
    normalize_kernel<false>
        <<<blocks_for(total), kThreads>>>(x, total, c, gamma, beta, mean, inv_std, y);
  check_launch("batchnorm_forward_train (normalize)");
}

void batchnorm_forward_train(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, float momentum, float* moving_mean,
                             float* moving_var, float* mean, float* inv_std, float* y) {
  batchnorm_forward_train(x, rows, c, gamma, beta, eps, momentum, moving_mean, moving_var, mean,
                          inv_std, y, false);
}

void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, const float* moving_mean,
                             const float* moving_var, float* y, bool relu) {
  const int64_t total = rows * c;
  if (total == 0) return;
  if (relu)
    infer_kernel<true><<<blocks_for(total), kThreads>>>(x, total, c, gamma, beta, eps, moving_mean,
                                                        moving_var, y);
  else
    infer_kernel<false><<<blocks_for(total), kThreads>>>(x, total, c, gamma, beta, eps, moving_mean,
                                                         moving_var, y);
  check_launch("batchnorm_forward_infer");
}

void batchnorm_forward_infer(const float* x, int64_t rows, int64_t c, const float* gamma,
                             const float* beta, float eps, const float* moving_mean,
                             const float* moving_var, float* y) {
  batchnorm_forward_infer(x, rows, c, gamma, beta, eps, moving_mean, moving_var, y, false);
}

void batchnorm_backward(const float* x, const float* dy, int64_t rows, int64_t c,
                        const float* gamma, const float* mean, const float* inv_std,
                        bool batch_statistics, float* dx, float* dgamma, float* dbeta) {
  if (c == 0) return;
  channel_sums<2>(plan(rows, c), rows, c, SumGradTerms{x, dy, mean, inv_std},
                  SetGrads{dgamma, dbeta}, "batchnorm_backward (dgamma, dbeta)");
  const int64_t total = rows * c;
  if (total == 0) return;
  // Without batch statistics the mean and variance are constants: the
  // correction term vanishes (multiplied by 0, as on the CPU).
  const float inv_rows = batch_statistics ? 1.0f / static_cast<float>(rows) : 0.0f;
  backward_dx_kernel<<<blocks_for(total), kThreads>>>(x, dy, total, c, gamma, mean, inv_std, dgamma,
                                                      dbeta, inv_rows, dx);
  check_launch("batchnorm_backward (dx)");
}

}  // namespace drun::kernels::cuda

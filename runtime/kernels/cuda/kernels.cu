// drun's own CUDA kernels (see kernels.hpp): grid-stride loops for the
// elementwise work, one block per row for the reductions.
#include <cuda_runtime.h>

#include <cfloat>
#include <stdexcept>
#include <string>

#include "kernels/cuda/kernels.hpp"

namespace drun::kernels::cuda {

namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

void check_launch(const char* what) {
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

__global__ void bias_add_kernel(float* y, const float* bias, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] += bias[i % cols];
}

// One thread per column, summing down the rows (coalesced across columns).
__global__ void bias_grad_kernel(const float* dy, float* db, int64_t rows, int64_t cols) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < cols;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.f;
    for (int64_t r = 0; r < rows; ++r) s += dy[r * cols + j];
    db[j] = s;
  }
}

__global__ void relu_forward_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

__global__ void scale_kernel(float* x, float s, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] *= s;
}

// One block per row: max and sum of exponentials by shared-memory reduction.
__global__ void softmax_ce_kernel(const float* logits, const int32_t* labels, float* row_loss,
                                  float* dlogits, int64_t classes, float inv_rows) {
  __shared__ float scratch[kThreads];
  const int64_t row = blockIdx.x;
  const float* z = logits + row * classes;
  float* dz = dlogits + row * classes;
  float m = -FLT_MAX;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) m = fmaxf(m, z[j]);
  scratch[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
    __syncthreads();
  }
  m = scratch[0];
  __syncthreads();
  float sum = 0.f;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) sum += expf(z[j] - m);
  scratch[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  const float total = scratch[0];
  const int32_t label = labels[row];
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
    dz[j] = (expf(z[j] - m) / total - (j == label ? 1.f : 0.f)) * inv_rows;
  if (threadIdx.x == 0) row_loss[row] = logf(total) + m - z[label];
}

__global__ void sgd_kernel(float* w, const float* g, float* v, float lr, float momentum,
                           bool nesterov, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (momentum == 0.f) {
      w[i] -= lr * g[i];
      continue;
    }
    const float vi = momentum * v[i] - lr * g[i];
    v[i] = vi;
    w[i] += nesterov ? momentum * vi - lr * g[i] : vi;
  }
}

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, float lr_t, float b1,
                            float b2, float eps, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    m[i] = b1 * m[i] + (1.f - b1) * g[i];
    v[i] = b2 * v[i] + (1.f - b2) * g[i] * g[i];
    w[i] -= lr_t * m[i] / (sqrtf(v[i]) + eps);
  }
}

}  // namespace

void bias_add(float* y, const float* bias, int64_t rows, int64_t cols) {
  bias_add_kernel<<<blocks_for(rows * cols), kThreads>>>(y, bias, rows, cols);
  check_launch("bias_add");
}

void bias_grad(const float* dy, float* db, int64_t rows, int64_t cols) {
  bias_grad_kernel<<<blocks_for(cols), kThreads>>>(dy, db, rows, cols);
  check_launch("bias_grad");
}

void relu_forward(const float* x, float* y, int64_t n) {
  relu_forward_kernel<<<blocks_for(n), kThreads>>>(x, y, n);
  check_launch("relu_forward");
}

void relu_backward(const float* y, const float* dy, float* dx, int64_t n) {
  relu_backward_kernel<<<blocks_for(n), kThreads>>>(y, dy, dx, n);
  check_launch("relu_backward");
}

void scale(float* x, float s, int64_t n) {
  scale_kernel<<<blocks_for(n), kThreads>>>(x, s, n);
  check_launch("scale");
}

void softmax_cross_entropy(const float* logits, const int32_t* labels, float* row_loss,
                           float* dlogits, int64_t rows, int64_t classes) {
  if (rows == 0) return;
  softmax_ce_kernel<<<static_cast<unsigned>(rows), kThreads>>>(
      logits, labels, row_loss, dlogits, classes, 1.f / static_cast<float>(rows));
  check_launch("softmax_cross_entropy");
}

void sgd_update(float* w, const float* g, float* v, float lr, float momentum, bool nesterov,
                int64_t n) {
  sgd_kernel<<<blocks_for(n), kThreads>>>(w, g, v, lr, momentum, nesterov, n);
  check_launch("sgd_update");
}

void adam_update(float* w, const float* g, float* m, float* v, float lr_t, float beta_1,
                 float beta_2, float epsilon, int64_t n) {
  adam_kernel<<<blocks_for(n), kThreads>>>(w, g, m, v, lr_t, beta_1, beta_2, epsilon, n);
  check_launch("adam_update");
}

}  // namespace drun::kernels::cuda

// ---- layout and padding helpers of the cuDNN convolutions (conv.hpp) ----
#include "kernels/cuda/conv.hpp"

namespace drun::kernels::cuda {

namespace {

__global__ void hwio_to_ohwi_kernel(const float* hwio, float* ohwi, int64_t spatial, int64_t c,
                                    int64_t co) {
  const int64_t n = spatial * c * co;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // i indexes hwio as ((s * c) + ci) * co + o.
    const int64_t o = i % co, ci = (i / co) % c, s = i / (co * c);
    ohwi[(o * spatial + s) * c + ci] = hwio[i];
  }
}

__global__ void ohwi_to_hwio_kernel(const float* ohwi, float* hwio, int64_t spatial, int64_t c,
                                    int64_t co) {
  const int64_t n = spatial * c * co;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i % co, ci = (i / co) % c, s = i / (co * c);
    hwio[i] = ohwi[(o * spatial + s) * c + ci];
  }
}

// One element of the padded tensor per index; zero outside the source.
__global__ void pad_kernel(const float* x, float* xp, int64_t n, int64_t h, int64_t w, int64_t c,
                           int64_t hp, int64_t wp) {
  const int64_t total = n * hp * wp * c;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = i % c, col = (i / c) % wp, row = (i / (c * wp)) % hp,
                  img = i / (c * wp * hp);
    xp[i] = row < h && col < w ? x[((img * h + row) * w + col) * c + ch] : 0.f;
  }
}

__global__ void crop_kernel(const float* xp, float* x, int64_t n, int64_t h, int64_t w, int64_t c,
                            int64_t hp, int64_t wp) {
  const int64_t total = n * h * w * c;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = i % c, col = (i / c) % w, row = (i / (c * w)) % h, img = i / (c * w * h);
    x[i] = xp[((img * hp + row) * wp + col) * c + ch];
  }
}

}  // namespace

void hwio_to_ohwi(const float* hwio, float* ohwi, int64_t kh, int64_t kw, int64_t c, int64_t co) {
  hwio_to_ohwi_kernel<<<blocks_for(kh * kw * c * co), kThreads>>>(hwio, ohwi, kh * kw, c, co);
  check_launch("hwio_to_ohwi");
}

void ohwi_to_hwio(const float* ohwi, float* hwio, int64_t kh, int64_t kw, int64_t c, int64_t co) {
  ohwi_to_hwio_kernel<<<blocks_for(kh * kw * c * co), kThreads>>>(ohwi, hwio, kh * kw, c, co);
  check_launch("ohwi_to_hwio");
}

void pad_bottom_right(const float* x, float* xp, int64_t n, int64_t h, int64_t w, int64_t c,
                      int64_t extra_h, int64_t extra_w) {
  const int64_t hp = h + extra_h, wp = w + extra_w;
  pad_kernel<<<blocks_for(n * hp * wp * c), kThreads>>>(x, xp, n, h, w, c, hp, wp);
  check_launch("pad_bottom_right");
}

void crop_bottom_right(const float* xp, float* x, int64_t n, int64_t h, int64_t w, int64_t c,
                       int64_t extra_h, int64_t extra_w) {
  crop_kernel<<<blocks_for(n * h * w * c), kThreads>>>(xp, x, n, h, w, c, h + extra_h, w + extra_w);
  check_launch("crop_bottom_right");
}

}  // namespace drun::kernels::cuda

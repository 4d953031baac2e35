// The layout and padding kernels of the cuDNN convolutions (conv.hpp):
// grid-stride loops, one output element per index.
#include <cuda_runtime.h>

#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/launch.cuh"

namespace drun::kernels::cuda {

using namespace launch;

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

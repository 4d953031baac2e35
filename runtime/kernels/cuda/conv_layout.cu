// The layout and padding kernels of the cuDNN convolutions (conv.hpp):
// grid-stride loops, one output element per index.
#include <cuda_runtime.h>

#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/launch.cuh"

namespace drun::kernels::cuda {

using namespace launch;

namespace {

template <class T>
__global__ void hwio_to_ohwi_kernel(const T* hwio, T* ohwi, int64_t spatial, int64_t c,
                                    int64_t co) {
  const int64_t n = spatial * c * co;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // i indexes hwio as ((s * c) + ci) * co + o.
    const int64_t o = i % co, ci = (i / co) % c, s = i / (co * c);
    ohwi[(o * spatial + s) * c + ci] = hwio[i];
  }
}

template <class T>
__global__ void ohwi_to_hwio_kernel(const T* ohwi, T* hwio, int64_t spatial, int64_t c,
                                    int64_t co) {
  const int64_t n = spatial * c * co;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i % co, ci = (i / co) % c, s = i / (co * c);
    hwio[i] = ohwi[(o * spatial + s) * c + ci];
  }
}

// One element of the padded tensor per index; zero outside the source.
template <class T>
__global__ void pad_kernel(const T* x, T* xp, int64_t n, int64_t h, int64_t w, int64_t c,
                           int64_t hp, int64_t wp) {
  const int64_t total = n * hp * wp * c;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = i % c, col = (i / c) % wp, row = (i / (c * wp)) % hp,
                  img = i / (c * wp * hp);
    xp[i] = row < h && col < w ? x[((img * h + row) * w + col) * c + ch] : T{};
  }
}

template <class T>
__global__ void crop_kernel(const T* xp, T* x, int64_t n, int64_t h, int64_t w, int64_t c,
                            int64_t hp, int64_t wp) {
  const int64_t total = n * h * w * c;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = i % c, col = (i / c) % w, row = (i / (c * w)) % h, img = i / (c * w * h);
    x[i] = xp[((img * hp + row) * wp + col) * c + ch];
  }
}

// Element types by size: the layout kernels move bits.
template <class F>
void by_element_size(size_t element_bytes, F&& f) {
  if (element_bytes == 2)
    f(uint16_t{});
  else
    f(float{});
}

}  // namespace

void hwio_to_ohwi(const void* hwio, void* ohwi, int64_t kh, int64_t kw, int64_t c, int64_t co,
                  size_t element_bytes) {
  by_element_size(element_bytes, [&](auto e) {
    using T = decltype(e);
    hwio_to_ohwi_kernel<<<blocks_for(kh * kw * c * co), kThreads>>>(
        static_cast<const T*>(hwio), static_cast<T*>(ohwi), kh * kw, c, co);
  });
  check_launch("hwio_to_ohwi");
}

void ohwi_to_hwio(const void* ohwi, void* hwio, int64_t kh, int64_t kw, int64_t c, int64_t co,
                  size_t element_bytes) {
  by_element_size(element_bytes, [&](auto e) {
    using T = decltype(e);
    ohwi_to_hwio_kernel<<<blocks_for(kh * kw * c * co), kThreads>>>(
        static_cast<const T*>(ohwi), static_cast<T*>(hwio), kh * kw, c, co);
  });
  check_launch("ohwi_to_hwio");
}

void pad_bottom_right(const void* x, void* xp, int64_t n, int64_t h, int64_t w, int64_t c,
                      int64_t extra_h, int64_t extra_w, size_t element_bytes) {
  const int64_t hp = h + extra_h, wp = w + extra_w;
  by_element_size(element_bytes, [&](auto e) {
    using T = decltype(e);
    pad_kernel<<<blocks_for(n * hp * wp * c), kThreads>>>(static_cast<const T*>(x),
                                                          static_cast<T*>(xp), n, h, w, c, hp, wp);
  });
  check_launch("pad_bottom_right");
}

void crop_bottom_right(const void* xp, void* x, int64_t n, int64_t h, int64_t w, int64_t c,
                       int64_t extra_h, int64_t extra_w, size_t element_bytes) {
  by_element_size(element_bytes, [&](auto e) {
    using T = decltype(e);
    crop_kernel<<<blocks_for(n * h * w * c), kThreads>>>(
        static_cast<const T*>(xp), static_cast<T*>(x), n, h, w, c, h + extra_h, w + extra_w);
  });
  check_launch("crop_bottom_right");
}

}  // namespace drun::kernels::cuda

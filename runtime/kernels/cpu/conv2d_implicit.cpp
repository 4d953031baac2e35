#include "kernels/cpu/conv2d_implicit.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/batchnorm_threads.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"

namespace drun::kernels::cpu {

namespace {

// Rows and columns of an image with the geometry's padding applied: exactly
// what the output's windows cover.
int64_t padded_h(const ConvGeometry& g) {
  return (g.oh - 1) * g.sh + g.kh;
}
int64_t padded_w(const ConvGeometry& g) {
  return (g.ow - 1) * g.sw + g.kw;
}

// Whether the kernel pads the image itself: it does for any rows, and for at
// most one column each side beyond which no pixel but a tile's first or last
// reaches (isa/conv_implicit_impl.hpp).
bool pads_in_kernel(const ConvGeometry& g) {
  return g.pad_left <= g.sw && padded_w(g) - g.pad_left - g.w <= g.sw;
}

int64_t padded_floats(const ConvGeometry& g) {
  return pads_in_kernel(g) ? 0 : padded_h(g) * padded_w(g) * g.c;
}

// The kernel's forward of image xn: read where it lies, or, with more padding
// than the kernel takes, copied into buf with zero borders first.
void forward_image(const ConvGeometry& g, const float* xn, const float* w, const float* b, float* y,
                   bool relu, float* buf) {
  const CpuKernels& kernels = cpu_kernels();
  if (pads_in_kernel(g)) return kernels.conv_implicit_forward(g, xn, w, b, y, relu);
  const int64_t ph = padded_h(g), pw = padded_w(g), c = g.c;
  const int64_t left = g.pad_left * c, inside = std::min(g.w, pw - g.pad_left) * c;
  for (int64_t r = 0; r < ph; ++r) {
    float* dst = buf + r * pw * c;
    const int64_t iy = r - g.pad_top;
    if (iy < 0 || iy >= g.h) {
      std::memset(dst, 0, sizeof(float) * pw * c);
      continue;
    }
    std::memset(dst, 0, sizeof(float) * left);
    std::memcpy(dst + left, xn + iy * g.w * c, sizeof(float) * inside);
    std::memset(dst + left + inside, 0, sizeof(float) * (pw * c - left - inside));
  }
  ConvGeometry padded = g;
  padded.h = ph;
  padded.w = pw;
  padded.pad_top = padded.pad_left = 0;
  kernels.conv_implicit_forward(padded, buf, w, b, y, relu);
}

void flip_kernel(const ConvGeometry& g, const float* w, float* flipped) {
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const float* src = w + (ky * g.kw + kx) * g.c * g.co;
      float* dst = flipped + ((g.kh - 1 - ky) * g.kw + (g.kw - 1 - kx)) * g.co * g.c;
      for (int64_t ci = 0; ci < g.c; ++ci)
        for (int64_t k = 0; k < g.co; ++k) dst[k * g.c + ci] = src[ci * g.co + k];
    }
}

// The workspace: the flipped kernel (input gradients), every thread's filter
// and bias partial sums, then every thread's buffers: a padded image and one
// image's masked output gradient.
int64_t partial_floats(const ConvGeometry& g) {
  return g.k() * g.co + g.co;
}
int64_t buffer_floats(const ConvGeometry& g) {
  const bool unit_stride = g.sh == 1 && g.sw == 1;
  const int64_t padded =
      std::max(padded_floats(g), unit_stride ? padded_floats(input_gradient_geometry(g)) : 0);
  return padded + g.out_pixels() * g.co;
}
float* thread_buffer(const ConvGeometry& g, float* workspace, int threads, int64_t t) {
  return workspace + g.k() * g.co + threads * partial_floats(g) + t * buffer_floats(g);
}

}  // namespace

bool conv2d_implicit_suits(const ConvGeometry& g) {
  return g.co % cpu_kernels().vec_floats == 0;
}

bool conv2d_implicit_backward_data_suits(const ConvGeometry& g) {
  return g.sh == 1 && g.sw == 1 && g.c % cpu_kernels().vec_floats == 0 && g.pad_top < g.kh &&
         g.pad_left < g.kw;
}

int64_t conv2d_implicit_workspace_floats(const ConvGeometry& g, int threads) {
  return g.k() * g.co + threads * (partial_floats(g) + buffer_floats(g));
}

void conv2d_implicit_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                             float* y, bool relu, float* workspace, int threads, float* moments) {
  const int64_t out = g.out_pixels() * g.co;
  for_each_range(g.n, threads, [&](int64_t t, int64_t n0, int64_t n1) {
    float* buf = thread_buffer(g, workspace, threads, t);
    for (int64_t n = n0; n < n1; ++n) {
      forward_image(g, x + n * g.h * g.w * g.c, w, b, y + n * out, relu, buf);
      if (moments)
        image_moments(y + n * out, g.out_pixels(), g.co, moments + n * 2 * g.co,
                      moments + (n * 2 + 1) * g.co);
    }
  });
}

void conv2d_implicit_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                     const float* relu_y, float* dw, float* db, float* workspace,
                                     int threads) {
  const CpuKernels& kernels = cpu_kernels();
  const int64_t co = g.co, k = g.k(), pixels = g.out_pixels();
  float* partial = workspace + k * co;
  const int parts = for_each_range(g.n, threads, [&](int64_t t, int64_t n0, int64_t n1) {
    float* masked = thread_buffer(g, workspace, threads, t) + padded_floats(g);
    float* dwt = partial + t * partial_floats(g);
    float* dbt = dwt + k * co;
    std::memset(dwt, 0, sizeof(float) * partial_floats(g));
    for (int64_t n = n0; n < n1; ++n) {
      const float* dz = dy + n * pixels * co;
      if (relu_y) {
        const float* yn = relu_y + n * pixels * co;
        for (int64_t i = 0; i < pixels * co; ++i) masked[i] = yn[i] > 0.0f ? dz[i] : 0.0f;
        dz = masked;
      }
      kernels.conv_implicit_backward_filter(g, x + n * g.h * g.w * g.c, dz, dwt);
      for (int64_t p = 0; p < pixels; ++p)
        for (int64_t j = 0; j < co; ++j) dbt[j] += dz[p * co + j];
    }
  });
  sum_filter_partials(partial, parts, k, co, dw, db, threads);
}

void conv2d_implicit_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                   float* dx, float* workspace, int threads) {
  const ConvGeometry t = input_gradient_geometry(g);
  float* flipped = workspace;
  flip_kernel(g, w, flipped);
  for_each_range(g.n, threads, [&](int64_t part, int64_t n0, int64_t n1) {
    float* buf = thread_buffer(g, workspace, threads, part);
    for (int64_t n = n0; n < n1; ++n)
      forward_image(t, dy + n * g.out_pixels() * g.co, flipped, nullptr, dx + n * g.h * g.w * g.c,
                    false, buf);
  });
}

}  // namespace drun::kernels::cpu

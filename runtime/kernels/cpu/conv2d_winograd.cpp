#include "kernels/cpu/conv2d_winograd.hpp"

#include <cstring>

#include "kernels/cpu/batchnorm_threads.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"

namespace drun::kernels::cpu {

namespace {

// F(2x2, 3x3)'s kernel transform: U = G g G^T.
constexpr float kG[4][3] = {
    {1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};

// u (16, rows, cols) from the HWIO kernel w: rows x cols = C x CO, or, for
// the input gradient, CO x C of the kernel flipped in both spatial axes.
void transform_kernel(const ConvGeometry& g, const float* w, bool for_input_gradient, float* u) {
  const int64_t rows = for_input_gradient ? g.co : g.c, cols = for_input_gradient ? g.c : g.co;
  const int64_t plane = rows * cols;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      float k[3][3];
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx)
          k[ky][kx] = for_input_gradient ? w[((2 - ky) * 3 + 2 - kx) * plane + j * g.co + i]
                                         : w[(ky * 3 + kx) * plane + i * g.co + j];
      float gk[4][3] = {};
      for (int r = 0; r < 4; ++r)
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) gk[r][kx] += kG[r][ky] * k[ky][kx];
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) {
          float e = 0.0f;
          for (int kx = 0; kx < 3; ++kx) e += gk[r][kx] * kG[s][kx];
          u[(r * 4 + s) * plane + i * cols + j] = e;
        }
    }
}

// dw (3, 3, C, CO) = G^T S G of the summed transformed gradient s (16, C, CO).
void untransform_filter_gradient(const ConvGeometry& g, const float* s, float* dw) {
  const int64_t plane = g.c * g.co;
  for (int64_t ij = 0; ij < plane; ++ij) {
    float t[3][4] = {};
    for (int ky = 0; ky < 3; ++ky)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) t[ky][c] += kG[r][ky] * s[(r * 4 + c) * plane + ij];
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        float e = 0.0f;
        for (int c = 0; c < 4; ++c) e += t[ky][c] * kG[c][kx];
        dw[(ky * 3 + kx) * plane + ij] = e;
      }
  }
}

// The input gradient of a stride-1 convolution as a forward convolution:
// over dy padded by 2 - pad, with the flipped, transposed kernel.
ConvGeometry backward_data_geometry(const ConvGeometry& g) {
  ConvGeometry t = g;
  t.h = g.oh;
  t.w = g.ow;
  t.c = g.co;
  t.co = g.c;
  t.pad_top = 2 - g.pad_top;
  t.pad_left = 2 - g.pad_left;
  t.oh = g.h;
  t.ow = g.w;
  return t;
}

// The workspace: the transformed kernel, every thread's transformed filter
// gradient and bias sums, then every thread's block buffer and one image's
// masked output gradient.
int64_t transformed_floats(const ConvGeometry& g) {
  return 16 * g.c * g.co;
}
int64_t partial_floats(const ConvGeometry& g) {
  return transformed_floats(g) + g.co;
}
int64_t buffer_floats(const ConvGeometry& g) {
  return std::max(winograd_block_floats(g), winograd_block_floats(backward_data_geometry(g))) +
         g.out_pixels() * g.co;
}
float* thread_buffer(const ConvGeometry& g, float* workspace, int threads, int64_t t) {
  return workspace + transformed_floats(g) + threads * partial_floats(g) + t * buffer_floats(g);
}

}  // namespace

bool conv2d_winograd_suits(const ConvGeometry& g) {
  const int64_t w = cpu_kernels().vec_floats;
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.c % w == 0 && g.co % w == 0 &&
         g.pad_top <= 2 && g.pad_left <= 2 && g.oh > 0 && g.ow > 0;
}

int64_t conv2d_winograd_workspace_floats(const ConvGeometry& g, int threads) {
  if (!conv2d_winograd_suits(g)) return 0;
  return transformed_floats(g) + threads * (partial_floats(g) + buffer_floats(g));
}

void conv2d_winograd_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                             float* y, bool relu, float* workspace, int threads, float* moments) {
  const CpuKernels& kernels = cpu_kernels();
  float* u = workspace;
  transform_kernel(g, w, false, u);
  const int64_t out = g.out_pixels() * g.co;
  for_each_range(g.n, threads, [&](int64_t t, int64_t n0, int64_t n1) {
    float* buf = thread_buffer(g, workspace, threads, t);
    for (int64_t n = n0; n < n1; ++n) {
      kernels.conv_winograd_forward(g, x + n * g.h * g.w * g.c, u, b, y + n * out, relu, buf);
      if (moments)
        image_moments(y + n * out, g.out_pixels(), g.co, moments + n * 2 * g.co,
                      moments + (n * 2 + 1) * g.co);
    }
  });
}

void conv2d_winograd_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                     const float* relu_y, float* dw, float* db, float* workspace,
                                     int threads) {
  const CpuKernels& kernels = cpu_kernels();
  const int64_t co = g.co, pixels = g.out_pixels(), plane = transformed_floats(g);
  float* partial = workspace + plane;
  const int parts = for_each_range(g.n, threads, [&](int64_t t, int64_t n0, int64_t n1) {
    float* buf = thread_buffer(g, workspace, threads, t);
    float* masked = buf + winograd_block_floats(g);
    float* st = partial + t * partial_floats(g);
    float* dbt = st + plane;
    std::memset(st, 0, sizeof(float) * partial_floats(g));
    for (int64_t n = n0; n < n1; ++n) {
      const float* dz = dy + n * pixels * co;
      if (relu_y) {
        const float* yn = relu_y + n * pixels * co;
        for (int64_t i = 0; i < pixels * co; ++i) masked[i] = yn[i] > 0.0f ? dz[i] : 0.0f;
        dz = masked;
      }
      kernels.conv_winograd_backward_filter(g, x + n * g.h * g.w * g.c, dz, st, buf);
      for (int64_t p = 0; p < pixels; ++p)
        for (int64_t j = 0; j < co; ++j) dbt[j] += dz[p * co + j];
    }
  });
  // The threads' sums in thread order into the first's, then back to 3x3.
  for (int t = 1; t < parts; ++t) {
    const float* src = partial + t * partial_floats(g);
    for (int64_t i = 0; i < partial_floats(g); ++i) partial[i] += src[i];
  }
  untransform_filter_gradient(g, partial, dw);
  std::memcpy(db, partial + plane, sizeof(float) * co);
}

void conv2d_winograd_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                   float* dx, float* workspace, int threads) {
  const CpuKernels& kernels = cpu_kernels();
  const ConvGeometry t = backward_data_geometry(g);
  float* u = workspace;
  transform_kernel(g, w, true, u);
  for_each_range(g.n, threads, [&](int64_t part, int64_t n0, int64_t n1) {
    float* buf = thread_buffer(g, workspace, threads, part);
    for (int64_t n = n0; n < n1; ++n)
      kernels.conv_winograd_forward(t, dy + n * g.out_pixels() * g.co, u, nullptr,
                                    dx + n * g.h * g.w * g.c, false, buf);
  });
}

}  // namespace drun::kernels::cpu

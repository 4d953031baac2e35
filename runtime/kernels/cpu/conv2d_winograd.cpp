#include "kernels/cpu/conv2d_winograd.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "base/options.hpp"
#include "kernels/cpu/batchnorm_threads.hpp"
#include "kernels/cpu/conv2d.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"

namespace drun::kernels::cpu {

namespace {

// The kernel transforms G (m+2 rows, 3 columns) of F(2, 3) and F(4, 3).
constexpr double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kG4[6][3] = {{1.0 / 4, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};

double g_at(int m, int r, int k) {
  return m == 4 ? kG4[r][k] : kG2[r][k];
}

// Kernel-transform pairs (input, output channel) a thread takes at least.
constexpr int64_t kPairsPerThread = 512;

// u (E, rows, cols) = G k G^T of each 3x3 kernel k of the HWIO kernel w:
// rows x cols = C x CO, or, for the input gradient, CO x C of the kernel
// flipped in both spatial axes. In double, rounded once. Split over the
// threads by rows (as the untransform and the partial sums below): on 16
// cores these per-layer passes were a ResNet step's serial part.
void transform_kernel(const ConvGeometry& g, const float* w, bool for_input_gradient, int m,
                      float* u, int threads) {
  const int a = m + 2;
  const int64_t rows = for_input_gradient ? g.co : g.c, cols = for_input_gradient ? g.c : g.co;
  const int64_t plane = rows * cols;
  for_each_chunk(rows, threads, (kPairsPerThread + cols - 1) / cols, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        double k[3][3];
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx)
            k[ky][kx] = for_input_gradient ? w[((2 - ky) * 3 + 2 - kx) * plane + j * g.co + i]
                                           : w[(ky * 3 + kx) * plane + i * g.co + j];
        double gk[6][3] = {};
        for (int r = 0; r < a; ++r)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) gk[r][kx] += g_at(m, r, ky) * k[ky][kx];
        for (int r = 0; r < a; ++r)
          for (int s = 0; s < a; ++s) {
            double e = 0.0;
            for (int kx = 0; kx < 3; ++kx) e += gk[r][kx] * g_at(m, s, kx);
            u[(r * a + s) * plane + i * cols + j] = static_cast<float>(e);
          }
      }
  });
}

// dw (3, 3, C, CO) = G^T S G of the summed transformed gradient s (E, C, CO).
void untransform_filter_gradient(const ConvGeometry& g, int m, const float* s, float* dw,
                                 int threads) {
  const int a = m + 2;
  const int64_t plane = g.c * g.co;
  for_each_chunk(plane, threads, kPairsPerThread, [&](int64_t ij0, int64_t ij1) {
    for (int64_t ij = ij0; ij < ij1; ++ij) {
      double t[3][6] = {};
      for (int ky = 0; ky < 3; ++ky)
        for (int r = 0; r < a; ++r)
          for (int c = 0; c < a; ++c) t[ky][c] += g_at(m, r, ky) * s[(r * a + c) * plane + ij];
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          double e = 0.0;
          for (int c = 0; c < a; ++c) e += t[ky][c] * g_at(m, c, kx);
          dw[(ky * 3 + kx) * plane + ij] = static_cast<float>(e);
        }
    }
  });
}

// The workspace, sized for the larger tile: the transformed kernel, every
// thread's transformed filter gradient and bias sums, then every thread's
// block buffer.
int64_t transformed_floats(const ConvGeometry& g) {
  return winograd_elements(4) * g.c * g.co;
}
int64_t partial_floats(const ConvGeometry& g) {
  return transformed_floats(g) + g.co;
}
int64_t buffer_floats(const ConvGeometry& g) {
  int64_t most = 0;
  for (int m : {2, 4})
    most = std::max(
        {most, winograd_block_floats(g, m), winograd_block_floats(input_gradient_geometry(g), m)});
  return most;
}
float* thread_buffer(const ConvGeometry& g, float* workspace, int threads, int64_t t) {
  return workspace + transformed_floats(g) + threads * partial_floats(g) + t * buffer_floats(g);
}

int tile_or_default(int tile) {
  return tile == 2 || tile == 4 ? tile : conv2d_winograd_tile();
}

}  // namespace

bool conv2d_winograd_suits(const ConvGeometry& g) {
  const int64_t w = cpu_kernels().vec_floats;
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.c % w == 0 && g.co % w == 0 &&
         g.pad_top <= 2 && g.pad_left <= 2 && g.oh > 0 && g.ow > 0;
}

int conv2d_winograd_tile() {
  static const int tile = [] {
    const char* v = std::getenv("DRUN_WINOGRAD_TILE");
    const std::string name = v ? v : "";
    if (name.empty() || name == "4") return 4;
    if (name == "2") return 2;
    throw UsageError("DRUN_WINOGRAD_TILE=" + name + ": the Winograd output tile is 2 or 4");
  }();
  return tile;
}

int64_t conv2d_winograd_workspace_floats(const ConvGeometry& g, int threads) {
  if (!conv2d_winograd_suits(g)) return 0;
  return transformed_floats(g) + threads * (partial_floats(g) + buffer_floats(g));
}

void conv2d_winograd_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                             float* y, bool relu, float* workspace, int threads, float* moments,
                             int tile) {
  const CpuKernels& kernels = cpu_kernels();
  const int m = tile_or_default(tile);
  float* u = workspace;
  transform_kernel(g, w, false, m, u, threads);
  const int64_t out = g.out_pixels() * g.co;
  for_each_range(g.n, threads, [&](int64_t t, int64_t n0, int64_t n1) {
    float* buf = thread_buffer(g, workspace, threads, t);
    for (int64_t n = n0; n < n1; ++n) {
      kernels.conv_winograd_forward(g, x + n * g.h * g.w * g.c, u, b, y + n * out, relu, buf, m);
      if (moments)
        image_moments(y + n * out, g.out_pixels(), g.co, moments + n * 2 * g.co,
                      moments + (n * 2 + 1) * g.co);
    }
  });
}

void conv2d_winograd_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                     const float* relu_y, float* dw, float* db, float* workspace,
                                     int threads, int tile) {
  const CpuKernels& kernels = cpu_kernels();
  const int m = tile_or_default(tile);
  const int64_t co = g.co, pixels = g.out_pixels();
  const int64_t plane = winograd_elements(m) * g.c * co;
  float* partial = workspace + transformed_floats(g);
  const int parts = for_each_range(g.n, threads, [&](int64_t t, int64_t n0, int64_t n1) {
    float* st = partial + t * partial_floats(g);
    float* dbt = st + plane;
    std::memset(st, 0, sizeof(float) * (plane + co));
    kernels.conv_winograd_backward_filter(g, x + n0 * g.h * g.w * g.c, dy + n0 * pixels * co,
                                          relu_y ? relu_y + n0 * pixels * co : nullptr, n1 - n0, st,
                                          thread_buffer(g, workspace, threads, t), m);
    for (int64_t p = n0 * pixels; p < n1 * pixels; ++p)
      for (int64_t j = 0; j < co; ++j)
        dbt[j] += !relu_y || relu_y[p * co + j] > 0.0f ? dy[p * co + j] : 0.0f;
  });
  // The threads' sums in thread order into the first's (each element so,
  // whichever thread adds it up: the bits of a serial sum), then back to 3x3.
  const int64_t stride = partial_floats(g);
  for_each_chunk(plane + co, threads, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float sum = partial[i];
      for (int t = 1; t < parts; ++t) sum += partial[t * stride + i];
      partial[i] = sum;
    }
  });
  untransform_filter_gradient(g, m, partial, dw, threads);
  std::memcpy(db, partial + plane, sizeof(float) * co);
}

void conv2d_winograd_backward_data(const ConvGeometry& g, const float* dy, const float* w,
                                   float* dx, float* workspace, int threads, int tile) {
  const CpuKernels& kernels = cpu_kernels();
  const int m = tile_or_default(tile);
  const ConvGeometry t = input_gradient_geometry(g);
  float* u = workspace;
  transform_kernel(g, w, true, m, u, threads);
  for_each_range(g.n, threads, [&](int64_t part, int64_t n0, int64_t n1) {
    float* buf = thread_buffer(g, workspace, threads, part);
    for (int64_t n = n0; n < n1; ++n)
      kernels.conv_winograd_forward(t, dy + n * g.out_pixels() * g.co, u, nullptr,
                                    dx + n * g.h * g.w * g.c, false, buf, m);
  });
}

}  // namespace drun::kernels::cpu

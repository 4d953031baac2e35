#include "kernels/cpu/conv2d_direct.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/split.hpp"

namespace drun::kernels::cpu {

namespace {

constexpr int64_t kMaxTaps = 32;
constexpr int64_t kMaxPoolWindow = 64;  // the fused kernels keep a window's offsets on the stack

}  // namespace

bool conv2d_direct_suits(const ConvGeometry& g) {
  return g.k() <= kMaxTaps && g.co <= 256;
}

void conv2d_direct_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                           float* y, bool relu, int threads) {
  const CpuKernels& kernels = cpu_kernels();
  for_each_range(g.n, threads, [&](int64_t, int64_t n0, int64_t n1) {
    kernels.conv_direct_forward(g, x, w, b, y, relu, n0, n1);
  });
}

int64_t conv2d_direct_workspace_floats(const ConvGeometry& g, int threads) {
  return threads * (g.out_pixels() * g.k() + g.k() * g.co + g.co);
}

// Each thread adds the filter and bias gradients of its images into a
// partial sum of its own (in the workspace, after every thread's taps
// scratch); the partials are then summed into dw and db.
template <class F>
void filter_gradient_by_threads(const ConvGeometry& g, float* dw, float* db, float* workspace,
                                int threads, F&& images) {
  const int64_t co = g.co, k = g.k(), scratch_stride = g.out_pixels() * k;
  float* partial = workspace + threads * scratch_stride;
  const int parts = for_each_range(g.n, threads, [&](int64_t t, int64_t n0, int64_t n1) {
    float* dwt = partial + t * (k * co + co);
    std::memset(dwt, 0, sizeof(float) * (k * co + co));
    images(dwt, dwt + k * co, workspace + t * scratch_stride, n0, n1);
  });
  sum_filter_partials(partial, parts, k, co, dw, db, threads);
}

void conv2d_direct_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                                   const float* relu_y, float* dw, float* db, float* workspace,
                                   int threads) {
  const CpuKernels& kernels = cpu_kernels();
  filter_gradient_by_threads(g, dw, db, workspace, threads,
                             [&](float* dwt, float* dbt, float* taps, int64_t n0, int64_t n1) {
                               kernels.conv_direct_backward_filter(g, x, dy, relu_y, dwt, dbt, taps,
                                                                   n0, n1);
                             });
}

bool conv2d_direct_max_pool_suits(const ConvGeometry& g, const PoolGeometry& pg) {
  return conv2d_direct_suits(g) && pg.n == g.n && pg.h == g.oh && pg.w == g.ow && pg.c == g.co &&
         pg.sh == pg.ph && pg.sw == pg.pw && pg.pad_top == 0 && pg.pad_left == 0 &&
         pg.ph * pg.pw <= kMaxPoolWindow;
}

void conv2d_direct_max_pool_forward(const ConvGeometry& g, const PoolGeometry& pg, const float* x,
                                    const float* w, const float* b, float* y, int32_t* argmax,
                                    bool relu, int threads) {
  const CpuKernels& kernels = cpu_kernels();
  for_each_range(g.n, threads, [&](int64_t, int64_t n0, int64_t n1) {
    kernels.conv_direct_max_pool_forward(g, pg, x, w, b, y, argmax, relu, n0, n1);
  });
}

void conv2d_direct_max_pool_backward_filter(const ConvGeometry& g, const PoolGeometry& pg,
                                            const float* x, const float* dy, const int32_t* argmax,
                                            const float* relu_y, float* dw, float* db,
                                            float* workspace, int threads) {
  const CpuKernels& kernels = cpu_kernels();
  filter_gradient_by_threads(g, dw, db, workspace, threads,
                             [&](float* dwt, float* dbt, float* taps, int64_t n0, int64_t n1) {
                               kernels.conv_direct_max_pool_backward_filter(
                                   g, pg, x, dy, argmax, relu_y, dwt, dbt, taps, n0, n1);
                             });
}

}  // namespace drun::kernels::cpu

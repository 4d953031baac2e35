#include "kernels/cpu/conv2d.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/options.hpp"
#include "kernels/cpu/conv2d_direct.hpp"
#include "kernels/cpu/conv2d_im2col.hpp"
#include "kernels/cpu/conv2d_implicit.hpp"
#include "kernels/cpu/conv2d_winograd.hpp"
#include "kernels/cpu/split.hpp"

namespace drun::kernels::cpu {

namespace {

// 1x1 stride-1 unpadded convolutions: the input already is the GEMM operand,
// and OpenBLAS multiplies it faster than the implicit kernels.
bool is_pointwise(const ConvGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0;
}

bool implicit_chosen(const ConvGeometry& g) {
  return conv_engine_choice() != ConvEngineChoice::im2col && !conv2d_direct_suits(g) &&
         !is_pointwise(g) && conv2d_implicit_suits(g);
}

// Winograd where its transforms, which grow with C + CO per tile while the
// multiplications it saves grow with C * CO, cost less than they save
// (tools/bench/conv_bench, docs/benchmarks.md): the forward and the input
// gradient from 32 channels in and out together (ResNet's 16 + 16: 1.2-1.4x
// faster than implicit GEMM), the filter gradient, whose output-gradient
// transform comes on top, from 64 (at 16 + 16 it measured 0.9x with AVX-512).
bool winograd_chosen(const ConvGeometry& g, bool filter_gradient) {
  return conv_engine_choice() == ConvEngineChoice::automatic && !conv2d_direct_suits(g) &&
         conv2d_winograd_suits(g) && g.c + g.co >= (filter_gradient ? 64 : 32);
}

}  // namespace

ConvEngineChoice conv_engine_choice() {
  static const ConvEngineChoice choice = [] {
    const char* v = std::getenv("DRUN_CONV");
    const std::string name = v ? v : "";
    if (name.empty() || name == "auto") return ConvEngineChoice::automatic;
    if (name == "implicit") return ConvEngineChoice::implicit;
    if (name == "im2col") return ConvEngineChoice::im2col;
    throw UsageError("DRUN_CONV=" + name +
                     ": not a convolution engine; use auto, implicit or im2col");
  }();
  return choice;
}

int64_t conv2d_workspace_floats(const ConvGeometry& g, int threads) {
  return std::max(
      {conv2d_direct_workspace_floats(g, threads), conv2d_im2col_workspace_floats(g, threads),
       conv2d_implicit_workspace_floats(g, threads), conv2d_winograd_workspace_floats(g, threads)});
}

ConvGeometry input_gradient_geometry(const ConvGeometry& g) {
  ConvGeometry t = g;
  t.h = g.oh;
  t.w = g.ow;
  t.c = g.co;
  t.co = g.c;
  t.pad_top = g.kh - 1 - g.pad_top;
  t.pad_left = g.kw - 1 - g.pad_left;
  t.oh = g.h;
  t.ow = g.w;
  return t;
}

void sum_filter_partials(const float* partial, int parts, int64_t k, int64_t co, float* dw,
                         float* db, int threads) {
  // Each element summed over the partials in their order, whichever thread
  // sums it: the bits of a serial sum. Split over the threads because on 16
  // cores the serial sum of 16 partials of a 64-channel layer's gradient
  // left 15 cores waiting.
  const int64_t each = k * co + co;
  for_each_chunk(each, threads, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float sum = partial[i];
      for (int t = 1; t < parts; ++t) sum += partial[t * each + i];
      if (i < k * co)
        dw[i] = sum;
      else
        db[i - k * co] = sum;
    }
  });
}

bool conv2d_forward_with_moments(const ConvGeometry& g, const float* x, const float* w,
                                 const float* b, float* y, bool relu, float* workspace, int threads,
                                 float* moments) {
  if (conv2d_direct_suits(g)) {
    conv2d_direct_forward(g, x, w, b, y, relu, threads);
    return false;
  }
  if (winograd_chosen(g, false)) {
    conv2d_winograd_forward(g, x, w, b, y, relu, workspace, threads, moments);
    return moments != nullptr;
  }
  if (implicit_chosen(g)) {
    conv2d_implicit_forward(g, x, w, b, y, relu, workspace, threads, moments);
    return moments != nullptr;
  }
  conv2d_im2col_forward(g, x, w, b, y, relu, workspace, threads);
  return false;
}

void conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y,
                    bool relu, float* workspace, int threads) {
  conv2d_forward_with_moments(g, x, w, b, y, relu, workspace, threads, nullptr);
}

void conv2d_backward_filter(const ConvGeometry& g, const float* x, const float* dy,
                            const float* relu_y, float* dw, float* db, float* workspace,
                            int threads) {
  if (conv2d_direct_suits(g))
    return conv2d_direct_backward_filter(g, x, dy, relu_y, dw, db, workspace, threads);
  if (winograd_chosen(g, true))
    return conv2d_winograd_backward_filter(g, x, dy, relu_y, dw, db, workspace, threads);
  if (implicit_chosen(g))
    return conv2d_implicit_backward_filter(g, x, dy, relu_y, dw, db, workspace, threads);
  conv2d_im2col_backward_filter(g, x, dy, relu_y, dw, db, workspace, threads);
}

void conv2d_backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                          float* workspace, int threads) {
  if (winograd_chosen(g, false))
    return conv2d_winograd_backward_data(g, dy, w, dx, workspace, threads);
  if (implicit_chosen(g) && conv2d_implicit_backward_data_suits(g))
    return conv2d_implicit_backward_data(g, dy, w, dx, workspace, threads);
  conv2d_im2col_backward_data(g, dy, w, dx, workspace, threads);
}

}  // namespace drun::kernels::cpu

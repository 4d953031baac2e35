// Conv2DTranspose's output against Keras: its lengths as Keras 3 computes
// them, and its values against Keras' JAX formulation (the input dilated by
// the strides, padded, correlated with the flipped kernel), which the layer
// does not share: it runs the convolution ops with the roles swapped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "gradient_checker.hpp"
#include "nn/layer.hpp"

namespace drun::nn {
namespace {

using testing::random_tensor;

json config_of(int64_t k, int64_t s, bool same, std::optional<int64_t> output_padding) {
  json c = {{"filters", 2},
            {"kernel_size", {k, 1}},
            {"strides", {s, 1}},
            {"padding", same ? "same" : "valid"}};
  if (output_padding) c["output_padding"] = {*output_padding, 0};
  return c;
}

TEST(Conv2DTranspose, OutputLengthsAreKeras) {
  struct Row {
    int64_t in, k, s;
    bool same;
    std::optional<int64_t> output_padding;
    int64_t keras;  // Keras 3's compute_output_shape
  };
  const Row rows[] = {{5, 3, 1, false, std::nullopt, 7},
                      {5, 3, 2, false, std::nullopt, 11},
                      {5, 2, 3, false, std::nullopt, 15},
                      {5, 3, 2, false, 1, 12},
                      {5, 4, 3, false, 2, 18},
                      {5, 3, 1, true, std::nullopt, 5},
                      {5, 3, 2, true, std::nullopt, 10},
                      {5, 4, 2, true, std::nullopt, 10},
                      {5, 3, 2, true, 0, 9},
                      {5, 3, 2, true, 1, 10},
                      {5, 4, 2, true, 0, 8},
                      {5, 4, 2, true, 1, 9},
                      {5, 1, 3, true, 2, 15},
                      {5, 5, 3, true, 2, 15},
                      {1, 2, 2, true, 1, 1}};
  for (const Row& r : rows) {
    const json c = config_of(r.k, r.s, r.same, r.output_padding);
    SCOPED_TRACE(c.dump());
    Rng rng(1);
    auto layer = make_layer("Conv2DTranspose", c, "up");
    const Shape in[1] = {Shape{r.in, 3, 4}};
    EXPECT_EQ(layer->build(in, rng), (Shape{r.keras, 3, 2}));
  }
}

// Keras' padding of the dilated input before the flipped kernel's
// correlation, on the side before the first pixel
// (keras/src/backend/common/backend_utils.py).
int64_t keras_left_pad(int64_t k, int64_t s, bool same, std::optional<int64_t> output_padding) {
  if (!same) return k - 1;
  const int64_t len = output_padding ? k + k % 2 - 2 + *output_padding : s + k - 2;
  return std::min(len / 2 + len % 2, k - 1);
}

// y[n, p, q, f] = b[f] + sum over the dilated, padded input z of
// z[p + a, q + b] * kernel[kh - 1 - a, kw - 1 - b, f, c].
Tensor keras_forward(const Tensor& x, const Tensor& kernel, const Tensor& bias, const Shape& out,
                     const json& c) {
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), ci = x.dim(3);
  const int64_t kh = kernel.dim(0), kw = kernel.dim(1), f = kernel.dim(2);
  const auto sh = c["strides"][0].get<int64_t>(), sw = c["strides"][1].get<int64_t>();
  const bool same = c["padding"] == "same";
  const auto pad = [&](int axis) {
    return c.contains("output_padding")
               ? std::optional<int64_t>(c["output_padding"][axis].get<int64_t>())
               : std::nullopt;
  };
  const int64_t top = keras_left_pad(kh, sh, same, pad(0));
  const int64_t left = keras_left_pad(kw, sw, same, pad(1));
  Tensor y(out.with_batch(n));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < out[0]; ++p)
      for (int64_t q = 0; q < out[1]; ++q)
        for (int64_t o = 0; o < f; ++o) {
          double sum = bias.f32()[o];
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t e = 0; e < kw; ++e) {
              const int64_t zi = p + a - top, zj = q + e - left;  // in the dilated input
              if (zi < 0 || zj < 0 || zi % sh || zj % sw || zi / sh >= h || zj / sw >= w) continue;
              const float* px = x.f32() + ((b * h + zi / sh) * w + zj / sw) * ci;
              const float* pk = kernel.f32() + (((kh - 1 - a) * kw + (kw - 1 - e)) * f + o) * ci;
              for (int64_t i = 0; i < ci; ++i) sum += double(px[i]) * pk[i];
            }
          y.f32()[((b * out[0] + p) * out[1] + q) * f + o] = static_cast<float>(sum);
        }
  return y;
}

TEST(Conv2DTranspose, ForwardIsKerasConvTranspose) {
  const json configs[] = {
      {{"filters", 3}, {"kernel_size", 3}, {"strides", {1, 1}}, {"padding", "valid"}},
      {{"filters", 3}, {"kernel_size", 3}, {"strides", {2, 2}}, {"padding", "same"}},
      {{"filters", 2}, {"kernel_size", {4, 3}}, {"strides", {2, 3}}, {"padding", "same"}},
      {{"filters", 2}, {"kernel_size", 2}, {"strides", {3, 3}}, {"padding", "valid"}},
      {{"filters", 2},
       {"kernel_size", 3},
       {"strides", {2, 3}},
       {"padding", "valid"},
       {"output_padding", {1, 2}}},
      {{"filters", 2},
       {"kernel_size", {4, 5}},
       {"strides", {2, 3}},
       {"padding", "same"},
       {"output_padding", {0, 2}}},
      {{"filters", 16}, {"kernel_size", 3}, {"strides", {1, 1}}, {"padding", "same"}},
  };
  for (const json& c : configs) {
    SCOPED_TRACE(c.dump());
    Rng rng(5);
    auto layer = make_layer("Conv2DTranspose", c, "up");
    const int64_t channels = c["filters"] == 16 ? 16 : 3;
    const Shape in[1] = {Shape{4, 5, channels}};
    const Shape out = layer->build(in, rng);
    auto& params = layer->params();
    for (float& v : params[1].value.span_f32()) v = rng.uniform(-0.5f, 0.5f);
    const Tensor x = random_tensor(in[0].with_batch(2), rng);
    forward1(*layer, x, false);
    const Tensor want = keras_forward(x, params[0].value, params[1].value, out, c);
    ASSERT_EQ(layer->output().shape(), want.shape());
    // Winograd (16 channels) rounds differently from a direct sum.
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_NEAR(layer->output().f32()[i], want.f32()[i], 1e-5 * (1 + std::abs(want.f32()[i])))
          << "element " << i;
  }
}

}  // namespace
}  // namespace drun::nn

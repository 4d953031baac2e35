// DepthwiseConv2D and SeparableConv2D beyond their gradients
// (layer_gradient_test.cpp): Keras' weights, the forward pass against the
// definition written out in loops, and the options drun refuses.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "built_layer.hpp"
#include "gradient_checker.hpp"
#include "nn/layer.hpp"
#include "usage_error.hpp"

namespace drun::nn {
namespace {

using testing::expect_usage_error;
using testing::random_tensor;

std::unique_ptr<Layer> built(const std::string& cls, const json& config, const Shape& in,
                             Rng& rng) {
  return testing::built_layer(cls, config, in, rng, "d");
}

TEST(DepthwiseConv2D, WeightsHaveKerasNamesShapesAndOrder) {
  Rng rng(1);
  auto dw =
      built("DepthwiseConv2D", {{"kernel_size", 3}, {"depth_multiplier", 2}}, Shape{6, 6, 3}, rng);
  ASSERT_EQ(dw->params().size(), 2u);
  EXPECT_EQ(dw->params()[0].name, "d/kernel");
  EXPECT_EQ(dw->params()[0].value.shape(), (Shape{3, 3, 3, 2}));
  EXPECT_EQ(dw->params()[1].name, "d/bias");
  EXPECT_EQ(dw->params()[1].value.shape(), (Shape{6}));
  EXPECT_EQ(dw->output_shape(), (Shape{4, 4, 6}));

  auto sep = built("SeparableConv2D",
                   {{"filters", 4},
                    {"kernel_size", 3},
                    {"depth_multiplier", 2},
                    {"strides", 2},
                    {"padding", "same"}},
                   Shape{7, 6, 3}, rng);
  ASSERT_EQ(sep->params().size(), 3u);
  EXPECT_EQ(sep->params()[0].name, "d/depthwise_kernel");
  EXPECT_EQ(sep->params()[0].value.shape(), (Shape{3, 3, 3, 2}));
  EXPECT_EQ(sep->params()[1].name, "d/pointwise_kernel");
  EXPECT_EQ(sep->params()[1].value.shape(), (Shape{1, 1, 6, 4}));
  EXPECT_EQ(sep->params()[2].name, "d/bias");
  EXPECT_EQ(sep->params()[2].value.shape(), (Shape{4}));
  EXPECT_EQ(sep->output_shape(), (Shape{4, 3, 4}));  // 'same' at stride 2: ceil(7/2), ceil(6/2)
}

// y[n, oy, ox, c * m + j] = b[c * m + j] + sum over the window of
// x[n, oy * s - pad + ky, ox * s - pad + kx, c] * w[ky, kx, c, j], then
// (SeparableConv2D) the 1x1 convolution and its bias.
TEST(DepthwiseConv2D, ForwardIsTheDefinition) {
  for (const bool separable : {false, true}) {
    SCOPED_TRACE(separable ? "SeparableConv2D" : "DepthwiseConv2D");
    Rng rng(2);
    const int64_t n = 2, h = 7, w = 6, c = 3, m = 2, k = 3, s = 2, filters = 4;
    json config = {
        {"kernel_size", k}, {"strides", s}, {"padding", "same"}, {"depth_multiplier", m}};
    if (separable) config["filters"] = filters;
    auto layer =
        built(separable ? "SeparableConv2D" : "DepthwiseConv2D", config, Shape{h, w, c}, rng);
    for (auto& p : layer->params())
      for (float& v : p.value.span_f32()) v = rng.uniform(-1.0f, 1.0f);
    const Tensor x = random_tensor(Shape{n, h, w, c}, rng, -1.0f, 1.0f);
    forward1(*layer, x, false);
    const Tensor& y = layer->output();
    // 'same' at stride 2: padding 1+1 by 0+1.
    const int64_t oh = 4, ow = 3, pad_top = 1, pad_left = 0;
    const float* kw = layer->params()[0].value.f32();
    const float* bias = layer->params().back().value.f32();
    const float* pw = separable ? layer->params()[1].value.f32() : nullptr;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          std::vector<double> d(static_cast<size_t>(c * m), 0.0);
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t j = 0; j < m; ++j) {
              double acc = separable ? 0.0 : bias[ci * m + j];
              for (int64_t ky = 0; ky < k; ++ky)
                for (int64_t kx = 0; kx < k; ++kx) {
                  const int64_t iy = oy * s - pad_top + ky, ix = ox * s - pad_left + kx;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                  acc += static_cast<double>(x.f32()[((b * h + iy) * w + ix) * c + ci]) *
                         kw[((ky * k + kx) * c + ci) * m + j];
                }
              d[static_cast<size_t>(ci * m + j)] = acc;
            }
          const int64_t outs = separable ? filters : c * m;
          for (int64_t o = 0; o < outs; ++o) {
            double want = d[static_cast<size_t>(o)];
            if (separable) {
              want = bias[o];
              for (int64_t i = 0; i < c * m; ++i)
                want += d[static_cast<size_t>(i)] * pw[i * filters + o];
            }
            EXPECT_NEAR(y.f32()[((b * oh + oy) * ow + ox) * outs + o], want, 1e-5)
                << "at " << b << ", " << oy << ", " << ox << ", " << o;
          }
        }
  }
}

TEST(DepthwiseConv2D, RefusalsNameTheLayerAndTheValue) {
  Rng rng(3);
  for (const char* cls : {"DepthwiseConv2D", "SeparableConv2D"}) {
    SCOPED_TRACE(cls);
    const json base = std::string(cls) == "SeparableConv2D"
                          ? json{{"filters", 4}, {"kernel_size", 3}}
                          : json{{"kernel_size", 3}};
    const std::string who = std::string(cls) + " 'd'";
    json dilated = base;
    dilated["dilation_rate"] = 2;
    expect_usage_error([&] { make_layer(cls, dilated, "d"); }, {who, "dilation_rate", "2"});
    json multiplier = base;
    multiplier["depth_multiplier"] = 0;
    expect_usage_error([&] { make_layer(cls, multiplier, "d"); }, {who, "depth_multiplier", "0"});
    json first = base;
    first["data_format"] = "channels_first";
    expect_usage_error([&] { make_layer(cls, first, "d"); }, {"channels_first"});
    json padding = base;
    padding["padding"] = "causal";
    expect_usage_error([&] { make_layer(cls, padding, "d"); }, {who, "causal"});
    expect_usage_error([&] { built(cls, base, Shape{2, 5, 3}, rng); }, {who, "3x3", "2, 5, 3)"});
    expect_usage_error([&] { built(cls, base, Shape{5, 3}, rng); }, {who});
  }
  expect_usage_error(
      [&] {
        make_layer("SeparableConv2D", {{"filters", 0}, {"kernel_size", 3}}, "d");
      },
      {"SeparableConv2D 'd'", "filters", "0"});
}

}  // namespace
}  // namespace drun::nn

// Every layer's backward against finite differences, through one checker.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gradient_checker.hpp"
#include "nn/layer.hpp"
#include "nn/layer_registry.hpp"

namespace drun::nn {
namespace {

using testing::check_gradients;
using testing::Probe;
using testing::random_tensor;

struct Case {
  std::string cls;
  json config;
  Shape in;  // per example
  int batch = 2;
  bool training = true;
  float input_scale = 1.0f;  // inputs uniform in [-scale, scale]
  int64_t max_points = 0;    // elements checked per tensor (0: all; GradCheckOptions)
  // > 0: the input is token ids in [0, ids) (Embedding), which have no
  // gradient: only the parameters are probed.
  int64_t ids = 0;
};

// The classes some test has checked, for EveryRegisteredLayerHasACase.
std::set<std::string>& checked_classes() {
  static std::set<std::string> classes;
  return classes;
}

void check_layer(const Case& c) {
  SCOPED_TRACE(c.cls + " " + c.config.dump());
  checked_classes().insert(c.cls);
  Rng rng(11);
  auto layer = make_layer(c.cls, c.config, "probe");
  const Shape in_shapes[1] = {c.in};
  layer->build(in_shapes, rng);
  // Small random biases keep ReLU pre-activations off the kink: zero biases put
  // all-zero patches exactly on it, where finite differences are meaningless.
  for (auto& p : layer->params())
    if (p.name.ends_with("bias") || p.name.ends_with("beta"))
      for (float& v : p.value.span_f32()) v = rng.uniform(-0.1f, 0.1f);
  Tensor x = random_tensor(c.in.with_batch(c.batch), rng, -c.input_scale, c.input_scale);
  if (c.ids > 0)
    for (float& v : x.span_f32()) v = static_cast<float>(rng.next() % static_cast<uint64_t>(c.ids));
  std::vector<Probe> probes;
  if (c.ids == 0) probes.push_back({"input", &x, nullptr});
  for (auto& p : layer->params())
    if (p.trainable) probes.push_back({p.name, &p.value, &p.grad});
  auto fwd = [&]() -> const Tensor& {
    forward1(*layer, x, c.training);
    return layer->output();
  };
  auto bwd = [&](const Tensor& dy) {
    backward1(*layer, x, dy, c.ids == 0);
    if (c.ids == 0) probes[0].grad = &layer->input_grad();
  };
  // The input gradient tensor is only known after a backward: run one first.
  fwd();
  bwd(layer->output());
  testing::GradCheckOptions opt;
  opt.max_points = c.max_points;
  check_gradients(fwd, bwd, probes, opt);
}

// A layer of several inputs (attention's query, value, key): `slots` names,
// for each input of the layer, which of `tensors` it gets, so that one
// tensor may be given twice (self-attention), its gradient the sum of its
// slots' as the model sums them.
void check_multi_input(const std::string& cls, const json& config,
                       const std::vector<Shape>& tensors, const std::vector<int>& slots,
                       bool training = true) {
  SCOPED_TRACE(cls + " " + config.dump());
  checked_classes().insert(cls);
  Rng rng(13);
  auto layer = make_layer(cls, config, "probe");
  std::vector<Shape> in_shapes;
  for (int s : slots) in_shapes.push_back(tensors[static_cast<size_t>(s)]);
  layer->build(in_shapes, rng);
  for (auto& p : layer->params())
    if (p.name.ends_with("bias"))
      for (float& v : p.value.span_f32()) v = rng.uniform(-0.1f, 0.1f);
  std::vector<Tensor> xs, grads;
  for (const Shape& s : tensors) {
    xs.push_back(random_tensor(s.with_batch(2), rng, -1.0f, 1.0f));
    grads.push_back(Tensor::zeros(s.with_batch(2)));
  }
  std::vector<const Tensor*> in;
  for (int s : slots) in.push_back(&xs[static_cast<size_t>(s)]);
  std::vector<Probe> probes;
  for (size_t i = 0; i < xs.size(); ++i)
    probes.push_back({"input " + std::to_string(i), &xs[i], &grads[i]});
  for (auto& p : layer->params())
    if (p.trainable) probes.push_back({p.name, &p.value, &p.grad});
  auto fwd = [&]() -> const Tensor& {
    layer->forward(in, training);
    return layer->output();
  };
  auto bwd = [&](const Tensor& dy) {
    const bool need[3] = {true, true, true};
    layer->backward(in, dy, std::span(need, slots.size()));
    for (Tensor& g : grads) g.fill(0.0f);
    for (size_t k = 0; k < slots.size(); ++k) {
      Tensor& g = grads[static_cast<size_t>(slots[k])];
      const Tensor& part = layer->input_grad(static_cast<int>(k));
      for (int64_t i = 0; i < g.numel(); ++i) g.f32()[i] += part.f32()[i];
    }
  };
  check_gradients(fwd, bwd, probes);
}

// Batch 2, query length 3, key length 4, 6 features, 2 heads of 3.
// Every activation of kernels/activation_list.hpp by its Keras name.
std::vector<std::string> every_activation() {
  std::vector<std::string> names;
  for (const kernels::Activation a : kernels::kAllActivations)
    names.emplace_back(kernels::activation_name(a));
  return names;
}

TEST(LayerGradient, Dense) {
  for (const std::string& act : every_activation())
    check_layer({"Dense", {{"units", 5}, {"activation", act}}, Shape{7}});
  check_layer({"Dense", {{"units", 3}, {"use_bias", false}}, Shape{4}, 3});
  // Over the last axis of sequences, as Keras.
  check_layer({"Dense", {{"units", 3}, {"activation", "gelu"}}, Shape{4, 5}});
  check_layer({"Dense", {{"units", 2}}, Shape{2, 3, 4}});
  // Pre-activations spread over [-4, 4]: hard_sigmoid's saturated sides
  // (its kinks at +-3 are skipped by the checker), elu/selu's exponential side.
  for (const char* act : {"hard_sigmoid", "elu", "selu", "gelu", "swish", "softplus"})
    check_layer({"Dense", {{"units", 4}, {"activation", act}}, Shape{6}, 3, true, 4.0f});
}

TEST(LayerGradient, Conv2D) {
  check_layer({"Conv2D", {{"filters", 4}, {"kernel_size", 3}}, Shape{6, 5, 2}});
  check_layer({"Conv2D",
               {{"filters", 3}, {"kernel_size", 3}, {"padding", "same"}, {"activation", "relu"}},
               Shape{5, 5, 3}});
  check_layer({"Conv2D",
               {{"filters", 2}, {"kernel_size", {2, 3}}, {"strides", 2}, {"padding", "same"}},
               Shape{7, 6, 2}});
  check_layer(
      {"Conv2D", {{"filters", 3}, {"kernel_size", 1}, {"use_bias", false}}, Shape{4, 4, 5}});
  check_layer({"Conv2D",
               {{"filters", 2}, {"kernel_size", 3}, {"activation", "tanh"}, {"strides", {1, 2}}},
               Shape{6, 7, 1}});
  // Activations whose backward reads the pre-activation (kept by the layer),
  // and ones computed from the output in place.
  for (const char* act : {"gelu", "silu", "elu", "softsign"})
    check_layer({"Conv2D",
                 {{"filters", 3}, {"kernel_size", 3}, {"padding", "same"}, {"activation", act}},
                 Shape{5, 4, 2}});
  // Channel counts with vectorised direct kernels (K <= 32 taps), and im2col + GEMM (K > 32).
  check_layer(
      {"Conv2D", {{"filters", 32}, {"kernel_size", 3}, {"activation", "tanh"}}, Shape{7, 6, 1}, 1});
  check_layer(
      {"Conv2D", {{"filters", 16}, {"kernel_size", 3}, {"padding", "same"}}, Shape{5, 6, 3}, 1});
  check_layer(
      {"Conv2D", {{"filters", 16}, {"kernel_size", 3}, {"padding", "same"}}, Shape{4, 5, 4}, 1});
  // Channels a multiple of every vector width (conv2d.cpp): at 16 + 16
  // Winograd's forward and input gradient with implicit GEMM's filter
  // gradient, at 32 + 32 Winograd throughout; 'same' and 'valid', with a
  // fused ReLU; 300 points of each tensor (the kernels have 2,304 and 9,216).
  check_layer({"Conv2D",
               {{"filters", 16}, {"kernel_size", 3}, {"padding", "same"}},
               Shape{4, 5, 16},
               1,
               true,
               1.0f,
               300});
  check_layer({"Conv2D",
               {{"filters", 32}, {"kernel_size", 3}, {"padding", "same"}, {"activation", "relu"}},
               Shape{5, 3, 32},
               1,
               true,
               1.0f,
               300});
  check_layer(
      {"Conv2D", {{"filters", 32}, {"kernel_size", 3}}, Shape{4, 5, 32}, 1, true, 1.0f, 300});
}

TEST(LayerGradient, Conv2DTranspose) {
  check_layer({"Conv2DTranspose", {{"filters", 3}, {"kernel_size", 3}}, Shape{4, 3, 2}});
  check_layer({"Conv2DTranspose",
               {{"filters", 2}, {"kernel_size", 3}, {"strides", 2}, {"padding", "same"}},
               Shape{3, 4, 3}});
  check_layer({"Conv2DTranspose",
               {{"filters", 2}, {"kernel_size", {3, 2}}, {"strides", 2}, {"activation", "tanh"}},
               Shape{3, 3, 2}});
  // output_padding: rows no input reaches ('valid'), and 'same''s other length.
  check_layer(
      {"Conv2DTranspose",
       {{"filters", 2}, {"kernel_size", 3}, {"strides", {2, 3}}, {"output_padding", {1, 2}}},
       Shape{3, 2, 2}});
  check_layer({"Conv2DTranspose",
               {{"filters", 3},
                {"kernel_size", 4},
                {"strides", 2},
                {"padding", "same"},
                {"output_padding", 1},
                {"activation", "gelu"}},
               Shape{3, 3, 2}});
  // Strides over the kernel: output pixels between the taps get the bias alone.
  check_layer({"Conv2DTranspose",
               {{"filters", 2}, {"kernel_size", 2}, {"strides", 3}, {"use_bias", false}},
               Shape{2, 3, 2}});
  check_layer({"Conv2DTranspose",
               {{"filters", 3}, {"kernel_size", 3}, {"padding", "same"}, {"activation", "relu"}},
               Shape{4, 4, 3}});
  // 16 + 16 channels, stride 1: the CPU's Winograd and implicit-GEMM engines.
  check_layer({"Conv2DTranspose",
               {{"filters", 16}, {"kernel_size", 3}, {"padding", "same"}},
               Shape{4, 5, 16},
               1,
               true,
               1.0f,
               300});
}

TEST(LayerGradient, Conv2DTransposeRefusesBadGeometry) {
  Rng rng(3);
  const json base = {{"filters", 2}, {"kernel_size", 3}, {"strides", 2}};
  for (const auto& [key, value] : {std::pair<std::string, json>{"output_padding", 2},
                                   {"output_padding", json::array({0, 3})},
                                   {"output_padding", -1},
                                   {"dilation_rate", 2},
                                   {"padding", "causal"},
                                   {"strides", 0}}) {
    json config = base;
    config[key] = value;
    try {
      make_layer("Conv2DTranspose", config, "up");
      ADD_FAILURE() << key << " " << value.dump() << " was accepted";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("Conv2DTranspose 'up'"), std::string::npos) << what;
      EXPECT_NE(what.find(value.is_string() ? value.get<std::string>() : value.dump()),
                std::string::npos)
          << what;
    }
  }
  // 'same' with output_padding 0 and an even kernel: (1 - 1) * 2 + 0 rows.
  auto empty = make_layer("Conv2DTranspose",
                          {{"filters", 2},
                           {"kernel_size", 2},
                           {"strides", 2},
                           {"padding", "same"},
                           {"output_padding", 0}},
                          "up");
  const Shape one_row[1] = {Shape{1, 4, 2}};
  EXPECT_THROW(empty->build(one_row, rng), UsageError);
  auto flat = make_layer("Conv2DTranspose", base, "up");
  const Shape vector[1] = {Shape{6}};
  EXPECT_THROW(flat->build(vector, rng), UsageError);
}

// Strides 1 and 2, 'same' (an odd padding pixel at stride 2) and 'valid',
// depth multipliers 1 and 2, with and without bias.
TEST(LayerGradient, DepthwiseConv2D) {
  check_layer({"DepthwiseConv2D", {{"kernel_size", 3}}, Shape{6, 5, 3}});
  check_layer({"DepthwiseConv2D",
               {{"kernel_size", 3}, {"strides", 2}, {"padding", "same"}, {"depth_multiplier", 2}},
               Shape{6, 7, 2}});
  check_layer(
      {"DepthwiseConv2D",
       {{"kernel_size", {2, 3}}, {"padding", "same"}, {"activation", "relu"}, {"use_bias", false}},
       Shape{5, 5, 4}});
  check_layer(
      {"DepthwiseConv2D",
       {{"kernel_size", 3}, {"strides", 2}, {"depth_multiplier", 2}, {"activation", "gelu"}},
       Shape{7, 6, 3}});
}

TEST(LayerGradient, SeparableConv2D) {
  check_layer({"SeparableConv2D", {{"filters", 4}, {"kernel_size", 3}}, Shape{6, 5, 3}});
  check_layer({"SeparableConv2D",
               {{"filters", 3},
                {"kernel_size", 3},
                {"strides", 2},
                {"padding", "same"},
                {"depth_multiplier", 2},
                {"activation", "relu"}},
               Shape{6, 7, 2}});
  check_layer({"SeparableConv2D",
               {{"filters", 5},
                {"kernel_size", 3},
                {"strides", 2},
                {"depth_multiplier", 2},
                {"use_bias", false},
                {"activation", "swish"}},
               Shape{7, 6, 3}});
  check_layer({"SeparableConv2D",
               {{"filters", 2}, {"kernel_size", 2}, {"padding", "same"}},
               Shape{4, 4, 3}});
}

TEST(LayerGradient, Pooling) {
  check_layer({"MaxPooling2D", {{"pool_size", 2}}, Shape{6, 6, 3}});
  check_layer({"MaxPooling2D", {{"pool_size", 2}}, Shape{7, 5, 3}});  // an edge no window covers
  check_layer(
      {"MaxPooling2D", {{"pool_size", 3}, {"strides", 2}, {"padding", "same"}}, Shape{7, 5, 2}});
  check_layer({"AveragePooling2D", {{"pool_size", 2}}, Shape{6, 4, 3}});
  check_layer({"AveragePooling2D",
               {{"pool_size", 3}, {"strides", 2}, {"padding", "same"}},
               Shape{5, 5, 2}});
  check_layer({"GlobalAveragePooling2D", json::object(), Shape{3, 4, 5}});
}

TEST(LayerGradient, ShapeAndActivationLayers) {
  check_layer({"Flatten", json::object(), Shape{3, 2, 4}});
  for (const std::string& act : every_activation())
    check_layer({"Activation", {{"activation", act}}, Shape{3, 6}});
  check_layer({"Activation", {{"activation", "swish"}}, Shape{3, 6}});
  check_layer({"Activation", {{"activation", "hard_sigmoid"}}, Shape{3, 6}, 2, true, 5.0f});
  check_layer({"ReLU", json::object(), Shape{10}});
  check_layer({"Softmax", json::object(), Shape{2, 5}});
  check_layer({"LeakyReLU", json::object(), Shape{10}});
  check_layer({"LeakyReLU", {{"negative_slope", 0.05}}, Shape{4, 3}});
}

TEST(LayerGradient, OneDimensionalLayers) {
  check_layer({"Conv1D", {{"filters", 4}, {"kernel_size", 3}}, Shape{7, 2}});
  check_layer({"Conv1D",
               {{"filters", 3},
                {"kernel_size", json::array({2})},
                {"strides", 2},
                {"padding", "same"},
                {"activation", "relu"}},
               Shape{7, 3}});
  check_layer({"Conv1D", {{"filters", 2}, {"kernel_size", 3}, {"padding", "causal"}}, Shape{6, 2}});
  check_layer({"MaxPooling1D", {{"pool_size", 2}}, Shape{7, 3}});
  check_layer(
      {"AveragePooling1D", {{"pool_size", 3}, {"strides", 2}, {"padding", "same"}}, Shape{7, 2}});
  check_layer({"GlobalAveragePooling1D", json::object(), Shape{5, 3}});
  check_layer({"GlobalMaxPooling1D", json::object(), Shape{5, 3}});
  check_layer({"GlobalMaxPooling2D", json::object(), Shape{3, 4, 2}});
}

TEST(LayerGradient, ShapeLayers) {
  check_layer({"Reshape", {{"target_shape", {4, -1}}}, Shape{3, 4}});
  check_layer({"Permute", {{"dims", {2, 1}}}, Shape{3, 4}});
  check_layer({"Permute", {{"dims", {3, 1, 2}}}, Shape{2, 3, 4}});
  check_layer({"RepeatVector", {{"n", 3}}, Shape{4}});
  check_layer({"PositionEmbedding", {{"sequence_length", 5}}, Shape{3, 4}, 3});
  check_layer({"ZeroPadding2D", {{"padding", 1}}, Shape{3, 2, 2}});
  check_layer({"ZeroPadding2D", {{"padding", {{1, 0}, {2, 1}}}}, Shape{2, 3, 2}});
  check_layer({"Cropping2D", {{"cropping", {1, 2}}}, Shape{4, 5, 2}});
  check_layer({"UpSampling2D", json::object(), Shape{2, 3, 2}});
  check_layer({"UpSampling2D", {{"size", {3, 1}}}, Shape{2, 2, 3}});
  check_multi_input("Concatenate", json::object(), {Shape{3, 2}, Shape{3, 4}}, {0, 1});
  check_multi_input("Concatenate", {{"axis", 1}}, {Shape{2, 3}, Shape{1, 3}, Shape{3, 3}},
                    {0, 1, 2});
  check_multi_input("Multiply", json::object(), {Shape{5}, Shape{5}}, {0, 1});
  check_multi_input("Multiply", json::object(), {Shape{2, 3}}, {0, 0, 0});  // x cubed
}

TEST(LayerGradient, BatchNormalizationTraining) {
  check_layer({"BatchNormalization", json::object(), Shape{3, 3, 4}, 3});
  check_layer({"BatchNormalization", {{"epsilon", 0.01}}, Shape{5}, 6});
}

TEST(LayerGradient, BatchNormalizationInference) {
  check_layer({"BatchNormalization", json::object(), Shape{2, 2, 3}, 2, false});
}

TEST(LayerGradient, LayerNormalization) {
  // Rank 2 (batch, features) and rank 3 (batch, time, features); the rows'
  // means away from zero, so that the mean's gradient matters.
  for (const bool center : {true, false})
    for (const bool scale : {true, false}) {
      const json config = {{"center", center}, {"scale", scale}};
      check_layer({"LayerNormalization", config, Shape{6}, 3});
      check_layer({"LayerNormalization", config, Shape{4, 5}, 2, true, 2.0f});
    }
  check_layer({"LayerNormalization", {{"epsilon", 1e-6}, {"axis", json::array({2})}}, Shape{3, 7}});
  check_layer({"LayerNormalization", {{"axis", json::array({-1})}}, Shape{2, 2, 40}, 1, false});
}

// The other axes are another normalisation: refused with the layer's name and the axis.
TEST(LayerGradient, LayerNormalizationRefusesOtherAxes) {
  Rng rng(1);
  for (const json& axis : {json(1), json::array({1}), json(-2), json::array({1, 2})}) {
    try {
      auto layer = make_layer("LayerNormalization", {{"axis", axis}}, "ln");
      const Shape in[1] = {Shape{4, 5}};
      layer->build(in, rng);
      ADD_FAILURE() << "axis " << axis.dump() << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("LayerNormalization 'ln'"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(axis.dump()), std::string::npos) << e.what();
    }
  }
}

TEST(LayerGradient, EmbeddingTable) {
  // Ids repeat (12 ids, 5 rows): their gradients add up in one row.
  check_layer({"Embedding", {{"input_dim", 5}, {"output_dim", 3}}, Shape{6}, 2, true, 1.0f, 0, 5});
  check_layer({"Embedding",
               {{"input_dim", 50}, {"output_dim", 8}, {"input_length", 4}},
               Shape{4},
               3,
               true,
               1.0f,
               0,
               50});
}

// A bad id is the user's mistake, named with the layer, never a read outside the table.
TEST(LayerGradient, EmbeddingRefusesBadIds) {
  Rng rng(2);
  auto layer = make_layer("Embedding", {{"input_dim", 10}, {"output_dim", 4}}, "emb");
  const Shape in[1] = {Shape{3}};
  layer->build(in, rng);
  for (const float bad : {10.0f, -1.0f, 1e9f}) {
    Tensor x = Tensor::zeros(Shape{2, 3});
    x.f32()[4] = bad;
    try {
      forward1(*layer, x, true);
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("Embedding 'emb'"), std::string::npos) << what;
      EXPECT_NE(what.find(fmt::format("id {:g} ", bad)), std::string::npos) << what;
    }
  }
  Tensor ids(Shape{2, 3}, DType::i32);
  for (int64_t i = 0; i < 6; ++i) ids.i32()[i] = static_cast<int32_t>(i);
  forward1(*layer, ids, true);  // int32 ids 0..5 are fine
  EXPECT_EQ(layer->output().shape(), (Shape{2, 3, 4}));
  ids.i32()[5] = 12;
  EXPECT_THROW(forward1(*layer, ids, true), UsageError);
  EXPECT_THROW(
      make_layer("Embedding", {{"input_dim", 10}, {"output_dim", 4}, {"mask_zero", true}}, "emb"),
      UsageError);
  auto wrong_length =
      make_layer("Embedding", {{"input_dim", 10}, {"output_dim", 4}, {"input_length", 5}}, "emb");
  EXPECT_THROW(wrong_length->build(in, rng), UsageError);
}

TEST(LayerGradient, DropoutInferenceIsIdentity) {
  check_layer({"Dropout", {{"rate", 0.5}}, Shape{8}, 2, false});
}

// Dropout draws a new mask per forward, so finite differences cannot probe it;
// its backward must apply exactly the forward's mask instead.
TEST(LayerGradient, DropoutBackwardUsesForwardMask) {
  Rng rng(3);
  checked_classes().insert("Dropout");
  auto layer = make_layer("Dropout", {{"rate", 0.4}, {"seed", 5}}, "dropout");
  const Shape in[1] = {Shape{100}};
  layer->build(in, rng);
  Tensor x = random_tensor(Shape{4, 100}, rng, 0.5f, 1.0f);
  forward1(*layer, x, true);
  Tensor dy = random_tensor(Shape{4, 100}, rng);
  backward1(*layer, x, dy, true);
  int dropped = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float m = layer->output().f32()[i] / x.f32()[i];
    EXPECT_NEAR(layer->input_grad().f32()[i], dy.f32()[i] * m, 1e-5);
    dropped += layer->output().f32()[i] == 0.0f;
  }
  EXPECT_GT(dropped, 100);
  EXPECT_LT(dropped, 220);
}

TEST(LayerGradient, AddPassesGradientToEachInput) {
  Rng rng(1);
  checked_classes().insert("Add");
  auto layer = make_layer("Add", json::object(), "add");
  const Shape in[2] = {Shape{3, 2}, Shape{3, 2}};
  layer->build(in, rng);
  Tensor a = random_tensor(Shape{2, 3, 2}, rng), b = random_tensor(Shape{2, 3, 2}, rng);
  const Tensor* xs[2] = {&a, &b};
  layer->forward(xs, true);
  for (int64_t i = 0; i < a.numel(); ++i)
    EXPECT_FLOAT_EQ(layer->output().f32()[i], a.f32()[i] + b.f32()[i]);
  Tensor dy = random_tensor(Shape{2, 3, 2}, rng);
  const bool need[2] = {true, true};
  layer->backward(xs, dy, need);
  for (int k = 0; k < 2; ++k)
    for (int64_t i = 0; i < dy.numel(); ++i)
      EXPECT_FLOAT_EQ(layer->input_grad(k).f32()[i], dy.f32()[i]);
}

TEST(LayerGradient, MultiHeadAttention) {
  const json heads = {{"num_heads", 2}, {"key_dim", 3}};
  check_multi_input("MultiHeadAttention", heads, {Shape{3, 6}, Shape{4, 6}}, {0, 1});
  // Self-attention, causal: the same tensor as query and value.
  json causal = heads;
  causal["use_causal_mask"] = true;
  check_multi_input("MultiHeadAttention", causal, {Shape{4, 6}}, {0, 0});
  // Causal with fewer queries than keys: query i sees keys 0..i, as Keras.
  check_multi_input("MultiHeadAttention", causal, {Shape{3, 6}, Shape{4, 6}}, {0, 1});
  // A key of its own, value heads of another size, other widths, no biases.
  json apart = heads;
  apart["value_dim"] = 2;
  apart["output_shape"] = 5;
  apart["use_bias"] = false;
  check_multi_input("MultiHeadAttention", apart, {Shape{3, 6}, Shape{4, 5}, Shape{4, 7}},
                    {0, 1, 2});
  // In inference (dropout off) the same products.
  json dropout = heads;
  dropout["dropout"] = 0.5;
  check_multi_input("MultiHeadAttention", dropout, {Shape{3, 6}, Shape{4, 6}}, {0, 1}, false);
}

// Attention dropout draws a new mask per forward: its backward must apply
// the forward's (a dropped probability passes no gradient to its value).
TEST(LayerGradient, MultiHeadAttentionDropoutMasksTheGradient) {
  Rng rng(5);
  auto layer = make_layer("MultiHeadAttention",
                          {{"num_heads", 1}, {"key_dim", 2}, {"dropout", 0.9}, {"seed", 3}}, "mha");
  const Shape in[2] = {Shape{1, 2}, Shape{1, 2}};
  layer->build(in, rng);
  // One key: without dropout its probability is 1 and the output depends on the value.
  const Tensor q = random_tensor(Shape{64, 1, 2}, rng), v = random_tensor(Shape{64, 1, 2}, rng);
  const Tensor* xs[2] = {&q, &v};
  layer->forward(xs, true);
  const Tensor dy = random_tensor(Shape{64, 1, 2}, rng);
  const bool need[2] = {true, true};
  layer->backward(xs, dy, need);
  int dropped = 0;
  for (int64_t b = 0; b < 64; ++b) {
    const float* out = layer->output().f32() + b * 2;
    const float* bias = layer->params().back().value.f32();
    if (out[0] != bias[0] || out[1] != bias[1]) continue;  // kept (scaled by 10)
    ++dropped;
    for (int i = 0; i < 2; ++i) EXPECT_EQ(layer->input_grad(1).f32()[b * 2 + i], 0.0f) << b;
  }
  EXPECT_GT(dropped, 40);
  EXPECT_LT(dropped, 64);
}

TEST(LayerGradient, MultiHeadAttentionRefusesMismatchedShapes) {
  Rng rng(1);
  const json heads = {{"num_heads", 2}, {"key_dim", 3}};
  auto layer = make_layer("MultiHeadAttention", heads, "mha");
  const Shape lengths[3] = {Shape{3, 6}, Shape{4, 6}, Shape{5, 6}};
  try {
    layer->build(lengths, rng);
    ADD_FAILURE() << "key and value of different lengths were accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "MultiHeadAttention 'mha': query (None, 3, 6), value (None, 4, 6), key (None, "
                 "5, 6): key and value must have the same length");
  }
  auto flat = make_layer("MultiHeadAttention", heads, "mha");
  const Shape ranks[2] = {Shape{6}, Shape{4, 6}};
  EXPECT_THROW(flat->build(ranks, rng), UsageError);
  EXPECT_THROW(
      make_layer("MultiHeadAttention",
                 {{"num_heads", 2}, {"key_dim", 3}, {"attention_axes", json::array({2})}}, "mha"),
      UsageError);
}

// The recurrent layers over (B, T, F) = (2, 4, 3) with 5 units: the last
// state and the whole sequence, forwards and backwards in time.
void check_recurrent(const std::string& cls, json config) {
  for (const bool sequences : {false, true})
    for (const bool backwards : {false, true}) {
      json c = config;
      c["units"] = 5;
      c["return_sequences"] = sequences;
      c["go_backwards"] = backwards;
      check_layer({cls, c, Shape{4, 3}});
    }
}

TEST(LayerGradient, SimpleRNN) {
  check_recurrent("SimpleRNN", json::object());
  check_recurrent("SimpleRNN", {{"activation", "sigmoid"}, {"use_bias", false}});
}

TEST(LayerGradient, LSTM) {
  check_recurrent("LSTM", json::object());
  check_recurrent("LSTM", {{"use_bias", false}});
}

TEST(LayerGradient, GRU) {
  check_recurrent("GRU", json::object());            // reset_after: Keras 3
  check_recurrent("GRU", {{"reset_after", false}});  // Keras 2
  check_recurrent("GRU", {{"reset_after", false}, {"use_bias", false}});
}

// Bidirectional over (B, T, F) = (2, 4, 3): each merge of the sequences
// (the backward copy's turned back in time) and of the last states, around
// each recurrent layer, and a given backward layer of other units.
TEST(LayerGradient, Bidirectional) {
  const auto wrapped = [](const char* cls, bool sequences, int units = 3) {
    return json{{"class_name", cls},
                {"config", {{"units", units}, {"return_sequences", sequences}}}};
  };
  for (const char* merge : {"concat", "sum", "mul", "ave"})
    for (const bool sequences : {true, false})
      check_layer({"Bidirectional",
                   {{"layer", wrapped("LSTM", sequences)}, {"merge_mode", merge}},
                   Shape{4, 3}});
  check_layer({"Bidirectional", {{"layer", wrapped("GRU", true)}}, Shape{4, 3}});
  check_layer({"Bidirectional", {{"layer", wrapped("SimpleRNN", false)}}, Shape{4, 3}});
  json backward = wrapped("GRU", true, 2);
  backward["config"]["go_backwards"] = true;
  check_layer({"Bidirectional",
               {{"layer", wrapped("GRU", true)}, {"backward_layer", backward}},
               Shape{4, 3}});
}

// return_state and initial states over (B, T, F) = (2, 4, 3): the objective
// reads every output (the sequence or last state, then the final states), so
// the gradients arriving at the states must reach the recurrence; and the
// initial states `states` (none: zeros) are probed, whose gradients the
// steps carry back to the first. The layer has `outputs` outputs.
void check_states(const std::string& cls, const json& config, int outputs,
                  const std::vector<Shape>& states) {
  SCOPED_TRACE(cls + " " + config.dump());
  Rng rng(17);
  auto layer = make_layer(cls, config, "probe");
  std::vector<Shape> in_shapes{Shape{4, 3}};
  in_shapes.insert(in_shapes.end(), states.begin(), states.end());
  layer->build(in_shapes, rng);
  for (auto& p : layer->params())
    if (p.name.ends_with("bias"))
      for (float& v : p.value.span_f32()) v = rng.uniform(-0.1f, 0.1f);
  std::vector<Tensor> xs;
  std::vector<const Tensor*> in;
  for (const Shape& s : in_shapes) xs.push_back(random_tensor(s.with_batch(2), rng, -1.0f, 1.0f));
  for (const Tensor& x : xs) in.push_back(&x);
  std::vector<Probe> probes;
  for (size_t i = 0; i < xs.size(); ++i)
    probes.push_back(
        {"input " + std::to_string(i), &xs[i], &layer->input_grad(static_cast<int>(i))});
  for (auto& p : layer->params())
    if (p.trainable) probes.push_back({p.name, &p.value, &p.grad});
  ASSERT_EQ(layer->num_outputs(), outputs);
  // Every output flattened one after another, and the gradient split back.
  int64_t total = 0;
  for (int k = 0; k < outputs; ++k) total += layer->output_shape(k).with_batch(2).numel();
  Tensor all(Shape{total});
  std::vector<Tensor> dys;
  std::vector<const Tensor*> extra;
  auto fwd = [&]() -> const Tensor& {
    layer->forward(in, true);
    float* o = all.f32();
    for (int k = 0; k < outputs; ++k)
      for (const float v : layer->output(k).span_f32()) *o++ = v;
    return all;
  };
  auto bwd = [&](const Tensor& dy) {
    dys.clear();
    extra.clear();
    const float* d = dy.f32();
    for (int k = 0; k < outputs; ++k) {
      dys.emplace_back(layer->output(k).shape());
      for (float& v : dys.back().span_f32()) v = *d++;
    }
    for (int k = 1; k < outputs; ++k) extra.push_back(&dys[static_cast<size_t>(k)]);
    layer->set_extra_output_grads(extra);
    const bool need[5] = {true, true, true, true, true};
    layer->backward(in, dys[0], std::span(need, in.size()));
  };
  testing::GradCheckOptions opt;
  opt.max_points = 16;
  check_gradients(fwd, bwd, probes, opt);
}

TEST(LayerGradient, ReturnStateAndInitialState) {
  for (const char* cls : {"LSTM", "GRU", "SimpleRNN"})
    for (const bool sequences : {false, true})
      for (const bool initial : {false, true}) {
        const json c = {{"units", 5},
                        {"return_state", true},
                        {"return_sequences", sequences},
                        {"go_backwards", initial && !sequences}};
        const int states = std::string(cls) == "LSTM" ? 2 : 1;
        check_states(cls, c, 1 + states,
                     initial ? std::vector<Shape>(static_cast<size_t>(states), Shape{5})
                             : std::vector<Shape>{});
      }
  check_states("GRU", {{"units", 5}, {"reset_after", false}, {"return_state", true}}, 2,
               {Shape{5}});
  // Bidirectional: [output, forward h, c, backward h, c], and initial states in that order.
  const json lstm = {
      {"class_name", "LSTM"},
      {"config", {{"units", 3}, {"return_sequences", true}, {"return_state", true}}}};
  check_states("Bidirectional", {{"layer", lstm}}, 5, {});
  check_states("Bidirectional", {{"layer", lstm}, {"merge_mode", "sum"}}, 5,
               std::vector<Shape>(4, Shape{3}));
}

// Last in this file, so that GoogleTest's order has run every case above: a
// layer added to nn/layer_list.hpp without a backward check fails here.
TEST(LayerGradient, EveryRegisteredLayerHasACase) {
  for (const LayerInfo* info : layer_registry())
    EXPECT_TRUE(checked_classes().count(info->about.name()))
        << info->about.name() << " has no gradient case in this file";
}

}  // namespace
}  // namespace drun::nn

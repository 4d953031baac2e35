// Every layer's backward against finite differences, through one checker.
#include <gtest/gtest.h>

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
  std::vector<Probe> probes{{"input", &x, nullptr}};
  for (auto& p : layer->params())
    if (p.trainable) probes.push_back({p.name, &p.value, &p.grad});
  auto fwd = [&]() -> const Tensor& {
    forward1(*layer, x, c.training);
    return layer->output();
  };
  auto bwd = [&](const Tensor& dy) {
    backward1(*layer, x, dy, true);
    probes[0].grad = &layer->input_grad();
  };
  // The input gradient tensor is only known after a backward: run one first.
  fwd();
  bwd(layer->output());
  testing::GradCheckOptions opt;
  opt.max_points = c.max_points;
  check_gradients(fwd, bwd, probes, opt);
}

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

TEST(LayerGradient, BatchNormalizationTraining) {
  check_layer({"BatchNormalization", json::object(), Shape{3, 3, 4}, 3});
  check_layer({"BatchNormalization", {{"epsilon", 0.01}}, Shape{5}, 6});
}

TEST(LayerGradient, BatchNormalizationInference) {
  check_layer({"BatchNormalization", json::object(), Shape{2, 2, 3}, 2, false});
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

// Last in this file, so that GoogleTest's order has run every case above: a
// layer added to nn/layer_list.hpp without a backward check fails here.
TEST(LayerGradient, EveryRegisteredLayerHasACase) {
  for (const LayerInfo* info : layer_registry())
    EXPECT_TRUE(checked_classes().count(info->about.name()))
        << info->about.name() << " has no gradient case in this file";
}

}  // namespace
}  // namespace drun::nn

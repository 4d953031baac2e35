// The recurrent layers beyond their gradients (layer_gradient_test.cpp):
// Keras' weights and initial values, what go_backwards means, and the
// options drun refuses.
#include <gtest/gtest.h>

#include <cmath>
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
  return testing::built_layer(cls, config, in, rng, "r");
}

TEST(Recurrent, WeightsHaveKerasNamesAndShapes) {
  Rng rng(1);
  struct Want {
    const char* cls;
    json config;
    const char* cell;
    Shape kernel, recurrent, bias;
  };
  const Want cases[] = {
      {"SimpleRNN", {{"units", 5}}, "simple_rnn_cell", Shape{3, 5}, Shape{5, 5}, Shape{5}},
      {"LSTM", {{"units", 5}}, "lstm_cell", Shape{3, 20}, Shape{5, 20}, Shape{20}},
      {"GRU", {{"units", 5}}, "gru_cell", Shape{3, 15}, Shape{5, 15}, Shape{2, 15}},
      {"GRU",
       {{"units", 5}, {"reset_after", false}},
       "gru_cell",
       Shape{3, 15},
       Shape{5, 15},
       Shape{15}}};
  for (const Want& w : cases) {
    SCOPED_TRACE(std::string(w.cls) + " " + w.config.dump());
    auto layer = built(w.cls, w.config, Shape{4, 3}, rng);
    const auto& p = layer->params();
    ASSERT_EQ(p.size(), 3u);
    const std::string prefix = std::string("r/") + w.cell + "/";
    EXPECT_EQ(p[0].name, prefix + "kernel");
    EXPECT_EQ(p[1].name, prefix + "recurrent_kernel");
    EXPECT_EQ(p[2].name, prefix + "bias");
    EXPECT_EQ(p[0].value.shape(), w.kernel);
    EXPECT_EQ(p[1].value.shape(), w.recurrent);
    EXPECT_EQ(p[2].value.shape(), w.bias);
  }
}

TEST(Recurrent, InitialValuesAreKeras) {
  Rng rng(2);
  auto lstm = built("LSTM", {{"units", 6}}, Shape{4, 3}, rng);
  // unit_forget_bias: the forget gate's block (the second) starts at 1.
  const Tensor& b = lstm->params()[2].value;
  for (int64_t j = 0; j < 24; ++j) EXPECT_EQ(b.f32()[j], j >= 6 && j < 12 ? 1.0f : 0.0f) << j;
  // Orthogonal recurrent kernel (6, 24): its rows are orthonormal.
  const Tensor& r = lstm->params()[1].value;
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t k = 0; k < 6; ++k) {
      double dot = 0.0;
      for (int64_t j = 0; j < 24; ++j) dot += double(r.f32()[i * 24 + j]) * r.f32()[k * 24 + j];
      EXPECT_NEAR(dot, i == k ? 1.0 : 0.0, 1e-5) << i << ", " << k;
    }
  auto plain = built("LSTM", {{"units", 2}, {"unit_forget_bias", false}}, Shape{4, 3}, rng);
  for (const float v : plain->params()[2].value.span_f32()) EXPECT_EQ(v, 0.0f);
}

// go_backwards runs the steps from the last; the returned sequence is in
// that order: the same as running forwards over the time-reversed input.
TEST(Recurrent, GoBackwardsIsTheReversedSequence) {
  for (const char* cls : {"SimpleRNN", "LSTM", "GRU"}) {
    SCOPED_TRACE(cls);
    Rng rng(3);
    const json fwd_config = {{"units", 4}, {"return_sequences", true}};
    json back_config = fwd_config;
    back_config["go_backwards"] = true;
    auto fwd = built(cls, fwd_config, Shape{5, 3}, rng);
    auto back = built(cls, back_config, Shape{5, 3}, rng);
    for (size_t i = 0; i < fwd->params().size(); ++i)
      back->params()[i].value.copy_from(fwd->params()[i].value);
    const Tensor x = random_tensor(Shape{2, 5, 3}, rng);
    Tensor reversed(x.shape());
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < 5; ++t)
        for (int64_t f = 0; f < 3; ++f)
          reversed.f32()[(b * 5 + t) * 3 + f] = x.f32()[(b * 5 + 4 - t) * 3 + f];
    forward1(*fwd, reversed, false);
    forward1(*back, x, false);
    ASSERT_EQ(back->output().shape(), (Shape{2, 5, 4}));
    for (int64_t i = 0; i < fwd->output().numel(); ++i)
      EXPECT_EQ(back->output().f32()[i], fwd->output().f32()[i]) << i;
  }
}

TEST(Recurrent, RefusesWhatItCannotDo) {
  const auto refused = [](const std::string& cls, json config, const std::string& part) {
    if (!config.contains("units")) config["units"] = 3;
    expect_usage_error([&] { make_layer(cls, config, "rnn"); }, {cls + " 'rnn'", part});
  };
  refused("GRU", {{"stateful", true}}, "stateful = true is not supported");
  refused("SimpleRNN", {{"dropout", 0.2}}, "dropout = 0.2");
  refused("LSTM", {{"recurrent_dropout", 0.5}}, "recurrent_dropout = 0.5");
  refused("LSTM", {{"activation", "relu"}}, "activation 'relu' is not supported");
  refused("GRU", {{"recurrent_activation", "hard_sigmoid"}},
          "recurrent_activation 'hard_sigmoid' is not supported");
  refused("SimpleRNN", {{"activation", "softmax"}}, "activation 'softmax' is not supported");
  refused("LSTM", {{"units", 0}}, "units must be positive");
  Rng rng(4);
  auto lstm = make_layer("LSTM", {{"units", 3}}, "rnn");
  const Shape flat[1] = {Shape{7}};
  expect_usage_error([&] { lstm->build(flat, rng); },
                     {"LSTM 'rnn'", "expects sequences (batch, time, features)"});
  // Initial states: an LSTM's are h and c, each (units).
  const Shape one_state[2] = {Shape{5, 2}, Shape{3}};
  expect_usage_error([&] { lstm->build(one_state, rng); },
                     {"LSTM 'rnn'", "takes the sequence and 2 initial state(s), got 1 state(s)"});
  const Shape wide[3] = {Shape{5, 2}, Shape{3}, Shape{4}};
  expect_usage_error([&] { lstm->build(wide, rng); },
                     {"LSTM 'rnn'", "initial state 1 has shape (None, 4), not (None, 3)"});
}

// return_state's outputs are Keras': [output, h] (LSTM: [output, h, c]),
// h the last step's state; initial states start the recurrence there.
TEST(Recurrent, ReturnStateGivesTheFinalStatesFromTheInitialOnes) {
  Rng rng(6);
  auto lstm =
      make_layer("LSTM", {{"units", 3}, {"return_sequences", true}, {"return_state", true}}, "rnn");
  const Shape in[3] = {Shape{4, 2}, Shape{3}, Shape{3}};
  lstm->build(in, rng);
  ASSERT_EQ(lstm->num_outputs(), 3);
  EXPECT_EQ(lstm->output_shape(2), Shape{3});
  const Tensor x = random_tensor(Shape{2, 4, 2}, rng), c0 = random_tensor(Shape{2, 3}, rng);
  Tensor h0 = random_tensor(Shape{2, 3}, rng);
  const Tensor* inputs[3] = {&x, &h0, &c0};
  lstm->forward(inputs, false);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 3; ++j)  // h_T is the sequence's last step
      EXPECT_EQ(lstm->output(1).f32()[b * 3 + j], lstm->output().f32()[(b * 4 + 3) * 3 + j]);
  const Tensor h_T = lstm->output(1).clone();
  h0.fill(0.0f);
  lstm->forward(inputs, false);
  EXPECT_NE(lstm->output(1).f32()[0], h_T.f32()[0]);
  expect_usage_error([&] { lstm->forward(std::span(inputs, 1), false); },
                     {"LSTM 'rnn'", "was built with 2 initial state(s), given 0"});
}

}  // namespace
}  // namespace drun::nn

// Bidirectional beyond its gradients (layer_gradient_test.cpp): that it is
// a forward and a backward copy of its layer merged as Keras merges them,
// its weights' names and order, its config, and what it refuses.
#include <gtest/gtest.h>

#include <string>

#include "built_layer.hpp"
#include "gradient_checker.hpp"
#include "nn/layer.hpp"
#include "usage_error.hpp"

namespace drun::nn {
namespace {

using testing::expect_usage_error;
using testing::random_tensor;

json lstm(bool sequences) {
  return {{"class_name", "LSTM"}, {"config", {{"units", 4}, {"return_sequences", sequences}}}};
}

std::unique_ptr<Layer> built(const std::string& cls, const json& config, const std::string& name,
                             Rng& rng) {
  return testing::built_layer(cls, config, Shape{5, 3}, rng, name);
}

TEST(Bidirectional, WeightsAreTheForwardCopysThenTheBackwardCopysUnderKerasNames) {
  Rng rng(1);
  auto bi = built("Bidirectional", {{"layer", lstm(true)}}, "bidirectional", rng);
  const auto& p = bi->params();
  ASSERT_EQ(p.size(), 6u);
  const char* names[6] = {"bidirectional/forward_lstm/lstm_cell/kernel",
                          "bidirectional/forward_lstm/lstm_cell/recurrent_kernel",
                          "bidirectional/forward_lstm/lstm_cell/bias",
                          "bidirectional/backward_lstm/lstm_cell/kernel",
                          "bidirectional/backward_lstm/lstm_cell/recurrent_kernel",
                          "bidirectional/backward_lstm/lstm_cell/bias"};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(p[i].name, names[i]);
  EXPECT_EQ(p[0].value.shape(), (Shape{3, 16}));
  EXPECT_EQ(bi->output_shape(), (Shape{5, 8}));
  // Two copies, each initialized for itself.
  EXPECT_NE(p[0].value.f32()[0], p[3].value.f32()[0]);
}

// The wrapper's output against two plain LSTMs given its weights: the
// forward one's and the go_backwards one's, whose sequence (in processing
// order) is turned back in time before the merge.
TEST(Bidirectional, MergesTheBackwardSequenceTurnedBackInTime) {
  for (const char* merge : {"concat", "sum", "mul", "ave"})
    for (const bool sequences : {true, false}) {
      SCOPED_TRACE(std::string(merge) + (sequences ? " sequences" : " last state"));
      Rng rng(2);
      auto bi =
          built("Bidirectional", {{"layer", lstm(sequences)}, {"merge_mode", merge}}, "bi", rng);
      json backwards = lstm(sequences)["config"];
      backwards["go_backwards"] = true;
      auto fwd = built("LSTM", lstm(sequences)["config"], "f", rng);
      auto back = built("LSTM", backwards, "b", rng);
      for (size_t i = 0; i < 3; ++i) {
        fwd->params()[i].value.copy_from(bi->params()[i].value);
        back->params()[i].value.copy_from(bi->params()[i + 3].value);
      }
      const Tensor x = random_tensor(Shape{2, 5, 3}, rng, -1.0f, 1.0f);
      forward1(*bi, x, false);
      forward1(*fwd, x, false);
      forward1(*back, x, false);
      const int64_t steps = sequences ? 5 : 1, u = 4;
      const bool concat = std::string(merge) == "concat";
      const Tensor& y = bi->output();
      ASSERT_EQ(y.numel(), 2 * steps * u * (concat ? 2 : 1));
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t t = 0; t < steps; ++t)
          for (int64_t j = 0; j < u; ++j) {
            const float f = fwd->output().f32()[(b * steps + t) * u + j];
            const float r = back->output().f32()[(b * steps + steps - 1 - t) * u + j];
            const int64_t at = (b * steps + t) * u * (concat ? 2 : 1) + j;
            if (concat) {
              EXPECT_EQ(y.f32()[at], f);
              EXPECT_EQ(y.f32()[at + u], r);
            } else {
              const std::string m = merge;
              const float want = m == "sum" ? f + r : m == "mul" ? f * r : (f + r) * 0.5f;
              EXPECT_FLOAT_EQ(y.f32()[at], want);
            }
          }
    }
}

TEST(Bidirectional, ConfigNamesTheCopiesAsKerasAndBuildsTheSameLayerAgain) {
  Rng rng(3);
  auto bi = built("Bidirectional", {{"layer", lstm(true)}, {"merge_mode", "sum"}}, "bi", rng);
  const json c = bi->config();
  EXPECT_EQ(c["merge_mode"], "sum");
  EXPECT_EQ(c["layer"]["class_name"], "LSTM");
  EXPECT_EQ(c["layer"]["config"]["name"], "forward_lstm");
  EXPECT_EQ(c["layer"]["config"]["go_backwards"], false);
  EXPECT_EQ(c["backward_layer"]["config"]["name"], "backward_lstm");
  EXPECT_EQ(c["backward_layer"]["config"]["go_backwards"], true);
  // Built again from the copies' names (as a Keras import passes them, its
  // initializers dropped), the copies keep them: no forward_forward_lstm.
  json again = {{"merge_mode", "sum"}};
  for (const char* k : {"layer", "backward_layer"}) {
    again[k] = {{"class_name", "LSTM"}, {"config", json::object()}};
    for (const char* key : {"name", "units", "return_sequences", "go_backwards"})
      again[k]["config"][key] = c[k]["config"][key];
  }
  auto rebuilt = built("Bidirectional", again, "bi", rng);
  ASSERT_EQ(rebuilt->params().size(), bi->params().size());
  for (size_t i = 0; i < bi->params().size(); ++i)
    EXPECT_EQ(rebuilt->params()[i].name, bi->params()[i].name);
}

TEST(Bidirectional, RefusesWhatItCannotDo) {
  const auto refused = [](const json& config, const std::string& part) {
    expect_usage_error([&] { make_layer("Bidirectional", config, "bi"); },
                       {"Bidirectional 'bi'", part});
  };
  refused({{"layer", lstm(true)}, {"merge_mode", "none"}}, "merge_mode None");
  refused({{"layer", lstm(true)}, {"merge_mode", "max"}}, "merge_mode 'max'");
  refused({{"layer", {{"class_name", "Dense"}, {"config", {{"units", 3}}}}}},
          "wraps a recurrent layer");
  refused({{"layer", {{"class_name", "Nope"}}}}, "wraps a recurrent layer");
  refused({{"layer", {{"class_name", "LSTM"}, {"config", {{"units", 0}}}}}},
          "LSTM 'forward_lstm': units must be positive");
  json same_way = lstm(true);
  same_way["config"]["name"] = "backward_lstm";
  refused({{"layer", lstm(true)}, {"backward_layer", same_way}}, "both have go_backwards");
  json last_only = lstm(false);
  last_only["config"]["go_backwards"] = true;
  refused({{"layer", lstm(true)}, {"backward_layer", last_only}}, "return_sequences");
  json other_units = lstm(true);
  other_units["config"]["units"] = 2;
  other_units["config"]["go_backwards"] = true;
  Rng rng(5);
  auto sum = make_layer(
      "Bidirectional",
      {{"layer", lstm(true)}, {"backward_layer", other_units}, {"merge_mode", "sum"}}, "bi");
  const Shape in[1] = {Shape{5, 3}};
  expect_usage_error([&] { sum->build(in, rng); }, {"Bidirectional 'bi'", "the same number"});
  auto flat = make_layer("Bidirectional", {{"layer", lstm(true)}}, "bi");
  const Shape rank1[1] = {Shape{7}};
  expect_usage_error([&] { flat->build(rank1, rng); },
                     {"LSTM 'forward_lstm'", "expects sequences (batch, time, features)"});
}

}  // namespace
}  // namespace drun::nn

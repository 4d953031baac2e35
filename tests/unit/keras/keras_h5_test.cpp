// Keras HDF5 export and import inside drun: a saved model loads back with the
// same weights and predictions (Sequential and functional), weights files
// round-trip by order and by name, and bad files are clear errors. What Keras
// itself makes of our files is tests/interop/keras_interop_test.py.
#include "keras/keras_h5.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "base/rng.hpp"
#include "seed_cnn.hpp"
#include "usage_error.hpp"

namespace drun::keras {
namespace {

namespace fs = std::filesystem;

class KerasH5 : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("drun_keras_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

json residual_spec() {
  return json::parse(R"({"name": "residual", "input_shape": [6, 6, 3], "layers": [
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 3, "padding": "same",
                                        "activation": "relu"}, "inbound": [-1]},
    {"class_name": "BatchNormalization", "config": {}, "inbound": [0]},
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 1}, "inbound": [-1]},
    {"class_name": "Add", "config": {}, "inbound": [1, 2]},
    {"class_name": "ReLU", "config": {}, "inbound": [3]},
    {"class_name": "GlobalAveragePooling2D", "config": {}, "inbound": [4]},
    {"class_name": "Dense", "config": {"units": 5}, "inbound": [5]}]})");
}

Tensor random_input(const Shape& per_example, int64_t n, uint64_t seed) {
  Rng rng(seed);
  Tensor x(per_example.with_batch(n));
  for (float& v : x.span_f32()) v = rng.uniform(-1.f, 1.f);
  return x;
}

void expect_same_weights(nn::Model& a, nn::Model& b) {
  auto pa = a.params(), pb = b.params();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i]->name, pb[i]->name);
    ASSERT_EQ(pa[i]->value.shape().str(), pb[i]->value.shape().str()) << pa[i]->name;
    for (int64_t j = 0; j < pa[i]->value.numel(); ++j)
      ASSERT_EQ(pa[i]->value.f32()[j], pb[i]->value.f32()[j]) << pa[i]->name << "[" << j << "]";
  }
}

void expect_same_predictions(nn::Model& a, nn::Model& b) {
  const Tensor x = random_input(a.input_shape(), 4, 11);
  const Tensor ya = a.forward(x, false).clone();
  const Tensor& yb = b.forward(x, false);
  ASSERT_EQ(ya.numel(), yb.numel());
  for (int64_t i = 0; i < ya.numel(); ++i) EXPECT_EQ(ya.f32()[i], yb.f32()[i]) << i;
}

TEST_F(KerasH5, SequentialRoundTrip) {
  nn::Model model(drun::testing::seed_cnn_spec(), 5);
  save_model(model, path("m.h5"), nullptr);
  auto loaded = load_model(path("m.h5"));
  EXPECT_EQ(loaded->summary(), model.summary());
  expect_same_weights(model, *loaded);
  expect_same_predictions(model, *loaded);
  EXPECT_EQ(model_config(model)["class_name"], "Sequential");
  EXPECT_FALSE(fs::exists(path("m.h5.tmp")));
}

TEST_F(KerasH5, FunctionalRoundTripKeepsTheGraphAndBatchNormStatistics) {
  nn::Model model(residual_spec(), 9);
  // Non-trivial moving statistics, so that they must travel too.
  for (Param* p : model.params())
    if (!p->trainable) p->value.fill(p->name.find("variance") != std::string::npos ? 2.5f : 0.25f);
  save_model(model, path("r.h5"), nullptr);
  const json config = model_config(model);
  EXPECT_EQ(config["class_name"], "Functional");
  auto loaded = load_model(path("r.h5"));
  ASSERT_EQ(loaded->nodes().size(), model.nodes().size());
  EXPECT_EQ(loaded->nodes()[3].inbound, (std::vector<int>{1, 2}));  // the Add node
  expect_same_weights(model, *loaded);
  expect_same_predictions(model, *loaded);
}

TEST_F(KerasH5, WeightsRoundTripByOrderAndByName) {
  nn::Model a(drun::testing::seed_cnn_spec(), 1), b(drun::testing::seed_cnn_spec(), 2);
  save_weights(a, path("w.h5"));
  load_weights(b, path("w.h5"));
  expect_same_weights(a, b);
  nn::Model c(drun::testing::seed_cnn_spec(), 3);
  load_weights(c, path("w.h5"), /*by_name=*/true);
  expect_same_weights(a, c);
}

using drun::testing::expect_usage_error;

// Causal self-attention: the layer takes the input twice, as two arguments
// (Keras 3's node form), and use_causal_mask travels as a call argument.
TEST_F(KerasH5, AttentionRoundTripKeepsItsCallArguments) {
  nn::Model model(json::parse(R"({"name": "attend", "input_shape": [5, 6], "layers": [
    {"class_name": "MultiHeadAttention", "config": {"num_heads": 2, "key_dim": 3,
     "value_dim": 2, "use_causal_mask": true}, "inbound": [-1, -1]},
    {"class_name": "Add", "config": {}, "inbound": [-1, 0]},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 2}}]})"),
                  4);
  const json config = model_config(model);
  const json& node = config["config"]["layers"][1]["inbound_nodes"][0];
  EXPECT_EQ(node["kwargs"], (json{{"use_causal_mask", true}}));
  ASSERT_EQ(node["args"].size(), 2u);
  EXPECT_EQ(node["args"][1]["config"]["keras_history"][0], "input_layer");
  EXPECT_FALSE(config["config"]["layers"][1]["config"].contains("use_causal_mask"));
  save_model(model, path("a.h5"), nullptr);
  auto loaded = load_model(path("a.h5"));
  EXPECT_EQ(loaded->nodes()[0].inbound, (std::vector<int>{-1, -1}));
  EXPECT_EQ(model_config(*loaded)["config"]["layers"][1]["inbound_nodes"][0]["kwargs"],
            (json{{"use_causal_mask", true}}));
  expect_same_weights(model, *loaded);
  expect_same_predictions(model, *loaded);
}

// Keras 3 records inputs given by keyword among the call's kwargs: drun
// reads them in the call's order (query, value, key), and refuses a tensor
// it has no input for (an attention mask).
TEST_F(KerasH5, AttentionInputsByKeywordAndTensorArgumentsOfKeras3Nodes) {
  const auto tensor = [](const std::string& layer) {
    return json{{"class_name", "__keras_tensor__"},
                {"config", {{"shape", {nullptr, 4, 6}}, {"keras_history", {layer, 0, 0}}}}};
  };
  const auto keras_model = [&](const json& kwargs) {
    const json input = {{"class_name", "InputLayer"},
                        {"name", "in"},
                        {"config", {{"batch_shape", {nullptr, 4, 6}}}}};
    const json relu = {{"class_name", "ReLU"},
                       {"name", "relu"},
                       {"config", json::object()},
                       {"inbound_nodes", {{{"args", {tensor("in")}}, {"kwargs", json::object()}}}}};
    const json mha = {{"class_name", "MultiHeadAttention"},
                      {"name", "mha"},
                      {"config", {{"num_heads", 1}, {"key_dim", 2}}},
                      {"inbound_nodes", {{{"args", {tensor("in")}}, {"kwargs", kwargs}}}}};
    return json{{"class_name", "Functional"},
                {"config",
                 {{"name", "f"},
                  {"layers", {input, relu, mha}},
                  {"output_layers", json::array({json::array({"mha", 0, 0})})}}}};
  };
  // mha(in, key=in, value=relu): query, value, key.
  const json spec = spec_from_model_config(
      keras_model({{"key", tensor("in")}, {"value", tensor("relu")}, {"use_causal_mask", false}}),
      "f.h5");
  EXPECT_EQ(spec["layers"][1]["inbound"], json::array({-1, 0, -1}));
  expect_usage_error(
      [&] {
        spec_from_model_config(
            keras_model({{"value", tensor("in")}, {"attention_mask", tensor("relu")}}), "f.h5");
      },
      {"f.h5", "'mha'", "attention_mask", "'relu'"});
}

// Keras 2 gives a call's keyword arguments as each reference's fourth
// element; one drun has no option for is refused unless neutral.
TEST_F(KerasH5, CallArgumentsOfKeras2NodesAndUnsupportedOnes) {
  const auto keras_model = [](const json& kwargs) {
    const json ref = json::array({"in", 0, 0, kwargs});
    return json{
        {"class_name", "Functional"},
        {"config",
         {{"name", "f"},
          {"layers", json::array({{{"class_name", "InputLayer"},
                                   {"name", "in"},
                                   {"config", {{"batch_shape", {nullptr, 4, 6}}}}},
                                  {{"class_name", "MultiHeadAttention"},
                                   {"name", "mha"},
                                   {"config", {{"num_heads", 1}, {"key_dim", 2}}},
                                   {"inbound_nodes", json::array({json::array({ref, ref})})}}})},
          {"output_layers", json::array({json::array({"mha", 0, 0})})}}}};
  };
  const json spec =
      spec_from_model_config(keras_model({{"use_causal_mask", true}, {"mask", nullptr}}), "f.h5");
  EXPECT_EQ(spec["layers"][0]["config"]["use_causal_mask"], true);
  EXPECT_EQ(spec["layers"][0]["inbound"], json::array({-1, -1}));
  expect_usage_error(
      [&] {
        spec_from_model_config(keras_model({{"return_attention_scores", true}}), "f.h5");
      },
      {"f.h5", "'mha'", "return_attention_scores"});
}

// An MLP with a Dense layer of every activation of the list, an Activation
// layer (an alias among them) and LeakyReLU layers: export writes each
// activation's Keras name and LeakyReLU's slope, and the model loads back
// with the same predictions.
TEST_F(KerasH5, EveryActivationAndLeakyReLURoundTrip) {
  json layers = json::array();
  for (const kernels::Activation a : kernels::kAllActivations)
    layers.push_back({{"class_name", "Dense"},
                      {"config", {{"units", 6}, {"activation", kernels::activation_name(a)}}}});
  layers.push_back({{"class_name", "Activation"}, {"config", {{"activation", "swish"}}}});
  layers.push_back({{"class_name", "LeakyReLU"}, {"config", {{"negative_slope", 0.1}}}});
  layers.push_back({{"class_name", "LeakyReLU"}, {"config", json::object()}});
  layers.push_back({{"class_name", "Dense"}, {"config", {{"units", 3}}}});
  nn::Model model(json{{"name", "mlp"}, {"input_shape", {5}}, {"layers", layers}}, 7);
  save_model(model, path("mlp.h5"), nullptr);
  auto loaded = load_model(path("mlp.h5"));
  EXPECT_EQ(loaded->summary(), model.summary());
  expect_same_predictions(model, *loaded);

  const json config = model_config(model)["config"]["layers"];
  size_t i = 1;  // after the InputLayer
  for (const kernels::Activation a : kernels::kAllActivations)
    EXPECT_EQ(config[i++]["config"]["activation"], kernels::activation_name(a));
  EXPECT_EQ(config[i++]["config"]["activation"], "silu");  // Keras' name for swish
  EXPECT_EQ(config[i]["class_name"], "LeakyReLU");
  EXPECT_EQ(config[i++]["config"]["negative_slope"], 0.1);
  EXPECT_EQ(config[i]["config"]["name"], "leaky_re_lu_1");
  EXPECT_EQ(config[i++]["config"]["negative_slope"], 0.3);  // Keras 3's default
}

// LeakyReLU's slope as Keras 3 writes it (negative_slope) and as Keras 2 did
// (alpha); a negative one is refused, as Keras does.
TEST_F(KerasH5, LeakyReLUSlopeFromKeras2And3) {
  const auto keras_model = [](const json& config) {
    return json{
        {"class_name", "Sequential"},
        {"config",
         {{"name", "s"},
          {"layers",
           json::array({{{"class_name", "InputLayer"}, {"config", {{"batch_shape", {nullptr, 4}}}}},
                        {{"class_name", "LeakyReLU"}, {"config", config}}})}}}};
  };
  for (const char* key : {"negative_slope", "alpha"}) {
    const json spec = spec_from_model_config(keras_model({{"name", "lr"}, {key, 0.25}}), "f.h5");
    EXPECT_EQ(spec["layers"][0]["config"]["negative_slope"], 0.25) << key;
    nn::Model model(spec, 1);
    Tensor x(Shape{1, 4});
    const float in[4] = {-2.0f, -0.5f, 0.0f, 3.0f};
    std::copy(in, in + 4, x.f32());
    const Tensor& y = model.forward(x, false);
    EXPECT_EQ(y.f32()[0], -0.5f) << key;
    EXPECT_EQ(y.f32()[1], -0.125f) << key;
    EXPECT_EQ(y.f32()[2], 0.0f) << key;
    EXPECT_EQ(y.f32()[3], 3.0f) << key;
  }
  expect_usage_error(
      [&] {
        nn::Model(
            spec_from_model_config(keras_model({{"name", "lr"}, {"negative_slope", -0.1}}), "f.h5"),
            1);
      },
      {"'lr'", "negative_slope", ">= 0"});
}

// A Keras 2 GRU (reset_after false, its `implementation` and `time_major`
// keys) and a Keras 3 LSTM read as drun's layers; time_major true is
// refused, naming the layer.
TEST_F(KerasH5, RecurrentLayersFromKeras2And3) {
  const auto keras_model = [](const json& layer) {
    return json{{"class_name", "Sequential"},
                {"config",
                 {{"name", "s"},
                  {"layers", json::array({{{"class_name", "InputLayer"},
                                           {"config", {{"batch_shape", {nullptr, 5, 3}}}}},
                                          layer})}}}};
  };
  const json gru2 = {{"name", "gru"},
                     {"units", 4},
                     {"reset_after", false},
                     {"implementation", 2},
                     {"time_major", false},
                     {"recurrent_dropout", 0.0},
                     {"kernel_regularizer", nullptr}};
  const json spec =
      spec_from_model_config(keras_model({{"class_name", "GRU"}, {"config", gru2}}), "f.h5");
  nn::Model gru(spec, 1);
  EXPECT_EQ(gru.params()[2]->value.shape(), Shape{12});  // the bias before the reset
  const json lstm3 = {{"name", "lstm"},    {"units", 2},      {"return_sequences", true},
                      {"unroll", false},   {"seed", nullptr}, {"zero_output_for_mask", false},
                      {"stateful", false}, {"use_bias", true}};
  nn::Model lstm(
      spec_from_model_config(keras_model({{"class_name", "LSTM"}, {"config", lstm3}}), "f.h5"), 1);
  EXPECT_EQ(lstm.params()[1]->value.shape(), (Shape{2, 8}));
  json major = gru2;
  major["time_major"] = true;
  expect_usage_error(
      [&] {
        spec_from_model_config(keras_model({{"class_name", "GRU"}, {"config", major}}), "f.h5");
      },
      {"f.h5", "'gru'", "time_major = true is not supported"});
}

// Keras 3's encoder-decoder, as its to_json writes it: the encoder's states
// are its outputs 1 and 2 (keras_history's third element), given to the
// decoder's call as initial_state and to a Concatenate. drun reads them as
// [layer, output] inputs and writes them back the same way; a model whose
// output is a state is refused.
TEST_F(KerasH5, ReturnStateAndInitialStateBothWays) {
  const auto tensor = [](const char* layer, int k, int units) {
    return json{{"class_name", "__keras_tensor__"},
                {"config", {{"shape", {nullptr, units}}, {"keras_history", {layer, 0, k}}}}};
  };
  const json x = {
      {"class_name", "__keras_tensor__"},
      {"config", {{"shape", {nullptr, 5, 3}}, {"keras_history", {"input_layer", 0, 0}}}}};
  const auto layer = [](const char* cls, const char* name, json config, json node) {
    config["name"] = name;
    return json{{"class_name", cls},
                {"name", name},
                {"config", config},
                {"inbound_nodes", json::array({node})}};
  };
  json layers = json::array();
  layers.push_back({{"class_name", "InputLayer"},
                    {"name", "input_layer"},
                    {"config", {{"batch_shape", {nullptr, 5, 3}}, {"name", "input_layer"}}},
                    {"inbound_nodes", json::array()}});
  layers.push_back(layer("LSTM", "enc", {{"units", 4}, {"return_state", true}},
                         {{"args", {x}}, {"kwargs", {{"training", false}, {"mask", nullptr}}}}));
  layers.push_back(
      layer("LSTM", "dec", {{"units", 4}, {"return_sequences", true}},
            {{"args", {x}},
             {"kwargs", {{"initial_state", {tensor("enc", 1, 4), tensor("enc", 2, 4)}}}}}));
  layers.push_back(layer("Flatten", "f", json::object(),
                         {{"args", {tensor("dec", 0, 20)}}, {"kwargs", json::object()}}));
  layers.push_back(
      layer("Concatenate", "cat", json::object(),
            {{"args", {{tensor("f", 0, 20), tensor("enc", 1, 4)}}}, {"kwargs", json::object()}}));
  json keras = {{"class_name", "Functional"},
                {"config",
                 {{"name", "seq2seq"},
                  {"layers", layers},
                  {"input_layers", {{"input_layer", 0, 0}}},
                  {"output_layers", {{"cat", 0, 0}}}}}};
  const json spec = spec_from_model_config(keras, "f.h5");
  EXPECT_EQ(spec["layers"][1]["inbound"], json::parse("[-1, [0, 1], [0, 2]]"));
  EXPECT_EQ(spec["layers"][3]["inbound"], json::parse("[2, [0, 1]]"));
  nn::Model model(spec, 1);
  EXPECT_EQ(model.output_shape(), Shape{24});
  save_model(model, path("s.h5"), nullptr);
  auto loaded = load_model(path("s.h5"));
  EXPECT_EQ(loaded->nodes()[1].inbound_output, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(loaded->nodes()[3].inbound_output, (std::vector<int>{0, 1}));
  const json back = model_config(model)["config"]["layers"][2]["inbound_nodes"][0];
  EXPECT_EQ(back["kwargs"]["initial_state"][1]["config"]["keras_history"],
            json::parse(R"(["enc", 0, 2])"));
  Rng rng(3);
  Tensor in(Shape{2, 5, 3});
  for (float& v : in.span_f32()) v = rng.uniform(-1.0f, 1.0f);
  const Tensor y = model.forward(in, false).clone();
  const Tensor& y2 = loaded->forward(in, false);
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.f32()[i], y2.f32()[i]) << i;
  keras["config"]["output_layers"] = {{"enc", 0, 2}};
  expect_usage_error([&] { spec_from_model_config(keras, "f.h5"); },
                     {"f.h5", "output 2 of layer 'enc'"});
}

// Bidirectional: drun's file loads back with the same weights (the copies',
// under the wrapper) and predictions; a Keras 3 config (the copies as Keras 3
// serializes them: dtype policies, initializer objects, build_config) reads
// as drun's layer; merge_mode None (two outputs) is refused, naming the layer.
TEST_F(KerasH5, BidirectionalRoundTripAndFromKeras3) {
  const json spec = json::parse(R"({"name": "bi", "input_shape": [5, 3], "layers": [
    {"class_name": "Bidirectional", "config": {"layer": {"class_name": "LSTM",
     "config": {"units": 4, "return_sequences": true}}}},
    {"class_name": "Bidirectional", "config": {"merge_mode": "ave", "layer": {
     "class_name": "GRU", "config": {"units": 2}}}},
    {"class_name": "Dense", "config": {"units": 3}}]})");
  nn::Model model(spec, 3);
  save_model(model, path("bi.h5"), nullptr);
  auto loaded = load_model(path("bi.h5"));
  expect_same_weights(model, *loaded);
  expect_same_predictions(model, *loaded);
  EXPECT_EQ(model.params()[3]->name, "bidirectional/backward_lstm/lstm_cell/kernel");

  const json policy = {{"module", "keras"},
                       {"class_name", "DTypePolicy"},
                       {"config", {{"name", "float32"}}},
                       {"registered_name", nullptr}};
  const auto copy = [&](const char* name, bool backwards) {
    return json{{"module", "keras.layers"},
                {"class_name", "GRU"},
                {"config",
                 {{"name", name},
                  {"dtype", policy},
                  {"units", 2},
                  {"go_backwards", backwards},
                  {"seed", nullptr},
                  {"kernel_regularizer", nullptr},
                  {"kernel_initializer",
                   {{"module", "keras.initializers"},
                    {"class_name", "GlorotUniform"},
                    {"config", {{"seed", nullptr}}}}}}},
                {"registered_name", nullptr},
                {"build_config", {{"input_shape", {nullptr, 5, 3}}}}};
  };
  json bi = {{"class_name", "Bidirectional"},
             {"config",
              {{"name", "bidirectional"},
               {"dtype", policy},
               {"merge_mode", "concat"},
               {"layer", copy("forward_gru", false)},
               {"backward_layer", copy("backward_gru", true)}}}};
  const auto keras_model = [](const json& layer) {
    return json{{"class_name", "Sequential"},
                {"config",
                 {{"name", "s"},
                  {"layers", json::array({{{"class_name", "InputLayer"},
                                           {"config", {{"batch_shape", {nullptr, 5, 3}}}}},
                                          layer})}}}};
  };
  nn::Model from_keras(spec_from_model_config(keras_model(bi), "f.h5"), 1);
  ASSERT_EQ(from_keras.params().size(), 6u);
  EXPECT_EQ(from_keras.params()[0]->name, "bidirectional/forward_gru/gru_cell/kernel");
  EXPECT_EQ(from_keras.params()[3]->name, "bidirectional/backward_gru/gru_cell/kernel");
  EXPECT_EQ(from_keras.output_shape(), Shape{4});
  bi["config"]["merge_mode"] = nullptr;
  expect_usage_error([&] { spec_from_model_config(keras_model(bi), "f.h5"); },
                     {"f.h5", "'bidirectional'", "merge_mode None"});
}

// An activation drun does not know is named, with every one it does.
TEST_F(KerasH5, UnknownActivationListsTheValidOnes) {
  const json spec = json::parse(R"({"name": "m", "input_shape": [4], "layers": [
    {"class_name": "Dense", "config": {"units": 2, "activation": "mish"}}]})");
  expect_usage_error([&] { nn::Model(spec, 1); },
                     {"Dense 'dense'", "unknown activation 'mish'",
                      "valid: linear, relu, sigmoid, tanh, softmax, elu, selu, softplus, softsign, "
                      "silu, gelu, hard_sigmoid, exponential, leaky_relu, swish"});
}

TEST_F(KerasH5, BadFilesAreClearErrors) {
  std::ofstream(path("text.h5")) << "not an HDF5 file\n";
  expect_usage_error([&] { load_model(path("text.h5")); }, {path("text.h5"), "not an HDF5 file"});
  expect_usage_error([&] { load_model(path("missing.h5")); }, {path("missing.h5")});

  nn::Model model(drun::testing::seed_cnn_spec(), 5);
  save_model(model, path("m.h5"), nullptr);
  fs::copy_file(path("m.h5"), path("cut.h5"));
  fs::resize_file(path("cut.h5"), fs::file_size(path("m.h5")) / 2);
  expect_usage_error([&] { load_model(path("cut.h5")); }, {path("cut.h5")});

  save_weights(model, path("w.h5"));
  expect_usage_error([&] { load_model(path("w.h5")); }, {path("w.h5"), "weights only"});
}

TEST_F(KerasH5, ShapeMismatchInLoadWeightsNamesTheWeight) {
  json small = drun::testing::seed_cnn_spec();
  small["layers"][3]["config"]["units"] = 32;
  nn::Model a(drun::testing::seed_cnn_spec(), 1), b(small, 1);
  save_weights(a, path("w.h5"));
  expect_usage_error([&] { load_weights(b, path("w.h5")); },
                     {path("w.h5"), "dense/kernel:0", "(5408, 64)", "(5408, 32)"});
}

TEST_F(KerasH5, UnsupportedLayersAndOptionsNameTheLayer) {
  const auto keras_model = [](const json& layer) {
    return json{{"class_name", "Sequential"},
                {"config",
                 {{"name", "s"},
                  {"layers", json::array({{{"class_name", "InputLayer"},
                                           {"config", {{"batch_shape", {nullptr, 8, 8, 3}}}}},
                                          layer})}}}};
  };
  expect_usage_error(
      [&] {
        spec_from_model_config(
            keras_model({{"class_name", "ConvLSTM2D"}, {"config", {{"name", "conv_lstm"}}}}),
            "f.h5");
      },
      {"f.h5", "'conv_lstm'", "ConvLSTM2D", "does not support"});
  expect_usage_error(
      [&] {
        spec_from_model_config(keras_model({{"class_name", "Conv2D"},
                                            {"config",
                                             {{"name", "c"},
                                              {"filters", 2},
                                              {"kernel_size", 3},
                                              {"data_format", "channels_first"}}}}),
                               "f.h5");
      },
      {"f.h5", "'c'", "channels_first"});
  expect_usage_error(
      [&] {
        spec_from_model_config(
            keras_model(
                {{"class_name", "Conv2D"},
                 {"config",
                  {{"name", "c"}, {"filters", 2}, {"kernel_size", 3}, {"dilation_rate", {2, 2}}}}}),
            "f.h5");
      },
      {"'c'", "dilation_rate"});
}

// A Keras file as Keras lays it out, with a model_config of our choosing and
// the weights of `weights` (what a file edited by hand, or by h5py, holds).
void write_keras_file(const std::string& path, const json& config, nn::Model& weights) {
  save_model(weights, path, nullptr);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  ASSERT_GE(H5Adelete(f, "model_config"), 0);
  const std::string text = config.dump();
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, text.size());
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(f, "model_config", type, space, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(H5Awrite(attr, type, text.data()), 0);
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
  ASSERT_GE(H5Fclose(f), 0);
}

json mlp_spec(int hidden) {
  return {{"name", "mlp"},
          {"input_shape", {4}},
          {"layers",
           {{{"class_name", "Dense"}, {"config", {{"units", hidden}}}},
            {{"class_name", "Dense"}, {"config", {{"units", 2}}}}}}};
}

// A Lambda layer's config is Python code (marshal bytecode): the file is
// refused by the layer's name before any of it is read, in one line.
TEST_F(KerasH5, LambdaLayerIsRefusedByName) {
  nn::Model model(mlp_spec(3), 1);
  json config = model_config(model);
  config["config"]["layers"].push_back(
      {{"class_name", "Lambda"},
       {"config",
        {{"name", "double_it"},
         {"function", {{"class_name", "__lambda__"}, {"config", {{"code", "4wEAAAAAAAAA"}}}}}}}});
  write_keras_file(path("lambda.h5"), config, model);
  for (const auto& load : {std::function<void()>([&] { load_model(path("lambda.h5")); }),
                           std::function<void()>([&] { inspect(path("lambda.h5")); })}) {
    expect_usage_error(load, {path("lambda.h5"), "'double_it'", "Lambda", "never runs code"});
    try {
      load();
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST_F(KerasH5, UnknownLayerClassInAFileNamesFileAndLayer) {
  nn::Model model(mlp_spec(3), 1);
  json config = model_config(model);
  config["config"]["layers"].push_back(
      {{"class_name", "GaussianNoise"}, {"config", {{"name", "noisy"}, {"stddev", 0.1}}}});
  write_keras_file(path("unknown.h5"), config, model);
  expect_usage_error([&] { load_model(path("unknown.h5")); },
                     {path("unknown.h5"), "'noisy'", "GaussianNoise", "does not support"});
}

// The config says 5 hidden units, the weights were saved with 3.
TEST_F(KerasH5, WeightsThatContradictTheConfigNameFileAndLayer) {
  nn::Model saved(mlp_spec(3), 1), described(mlp_spec(5), 1);
  write_keras_file(path("contradicts.h5"), model_config(described), saved);
  expect_usage_error(
      [&] { load_model(path("contradicts.h5")); },
      {path("contradicts.h5"), "layer 'dense'", "dense/kernel:0", "(4, 3)", "(4, 5)"});
}

// What a fuzzer found or could: values of the wrong JSON type anywhere in a
// model_config are UsageErrors naming the file, never JSON exceptions.
TEST_F(KerasH5, MalformedModelConfigsAreUsageErrors) {
  const json input = {{"class_name", "InputLayer"},
                      {"name", "in"},
                      {"config", {{"batch_shape", {nullptr, 4}}}},
                      {"inbound_nodes", json::array()}};
  const auto functional = [&](const json& dense, const json& outputs) {
    return json{
        {"class_name", "Functional"},
        {"config", {{"name", "f"}, {"layers", {input, dense}}, {"output_layers", outputs}}}};
  };
  const json dense = {{"class_name", "Dense"},
                      {"name", "d"},
                      {"config", {{"name", "d"}, {"units", 2}}},
                      {"inbound_nodes", {{{"keras_history", 7}}}}};
  json linked = dense;
  linked["inbound_nodes"] = json::array({json::array({json::array({"in", 0, 0, json::object()})})});
  const std::vector<json> bad = {
      json{{"class_name", 3}, {"config", json::object()}},
      json{{"class_name", "Sequential"}, {"config", {{"layers", 5}}}},
      json{{"class_name", "Sequential"}, {"config", {{"layers", {7}}}}},
      json{{"class_name", "Sequential"}, {"config", {{"layers", {{{"class_name", 1}}}}}}},
      json{{"class_name", "Sequential"}, {"config", {{"name", {1}}, {"layers", json::array()}}}},
      functional(dense, {{"d", 0, 0}}),
      functional(linked, json{{"keras_history", json::array()}}),
      json{{"class_name", "Sequential"},
           {"config",
            {{"layers",
              {{{"class_name", "Dense"},
                {"config", {{"batch_shape", {nullptr, 4}}, {"dtype", {{"config", 3}}}}}}}}}}}};
  for (const json& config : bad) {
    try {
      spec_from_model_config(config, "f.h5");
      ADD_FAILURE() << "accepted " << config.dump();
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("f.h5"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace drun::keras

// Model composition: Sequential chains, residual graphs (gradient-checked as a
// whole), shapes, names, summaries and the errors users see.
#include "nn/model.hpp"

#include <gtest/gtest.h>

#include "gradient_checker.hpp"
#include "seed_cnn.hpp"

namespace drun::nn {
namespace {

using testing::seed_cnn_spec;

TEST(Model, SeedCnnShapesNamesAndCounts) {
  Model m(seed_cnn_spec(), 1);
  EXPECT_EQ(m.output_shape(), Shape{10});
  ASSERT_EQ(m.nodes().size(), 5u);
  EXPECT_EQ(m.nodes()[0].layer->name(), "conv2d");
  EXPECT_EQ(m.nodes()[3].layer->name(), "dense");
  EXPECT_EQ(m.nodes()[4].layer->name(), "dense_1");
  EXPECT_EQ(m.nodes()[2].layer->output_shape(), Shape{5408});
  EXPECT_EQ(m.param_count(), 320 + 346176 + 650);
  const std::string s = m.summary();
  EXPECT_NE(s.find("conv2d (Conv2D)"), std::string::npos) << s;
  EXPECT_NE(s.find("(None, 26, 26, 32)"), std::string::npos) << s;
  EXPECT_NE(s.find("Total params: 347,146"), std::string::npos) << s;
  auto params = m.params();
  ASSERT_EQ(params.size(), 6u);
  EXPECT_EQ(params[0]->name, "conv2d/kernel");
  EXPECT_EQ(params[0]->value.shape(), (Shape{3, 3, 1, 32}));
}

TEST(Model, SummaryColumnsWidenForLongNamesAndShapes) {
  // The name (30 characters) and the shape (30) overrun Keras' columns of 28
  // and 26: each must still start where its header does, after a space.
  Model m(json::parse(R"({"name": "sequential", "input_shape": [100000, 100000, 2], "layers": [
    {"class_name": "Dense", "config": {"units": 123456, "name": "dense_with_a_long_name"}}]})"),
          1);
  const std::string s = m.summary();
  const auto line_with = [&](const std::string& text) {
    const size_t at = s.find(text);
    const size_t begin = s.rfind('\n', at) + 1;
    return s.substr(begin, s.find('\n', at) - begin);
  };
  const std::string header = line_with("Output Shape"), row = line_with("dense_with_a_long_name");
  const size_t shape_at = header.find("Output Shape"), params_at = header.find("Param #");
  EXPECT_EQ(row.substr(shape_at, 30), "(None, 100000, 100000, 123456)") << s;
  EXPECT_EQ(row[shape_at - 1], ' ') << s;
  EXPECT_EQ(row.substr(params_at, 8), "370,368 ") << s;
  EXPECT_EQ(row[params_at - 1], ' ') << s;
  EXPECT_EQ(line_with("___").size(), header.size()) << s;  // the rules span the columns
}

TEST(Model, SameSeedSameWeightsOtherSeedOther) {
  Model a(seed_cnn_spec(), 42), b(seed_cnn_spec(), 42), c(seed_cnn_spec(), 43);
  const Tensor& wa = a.params()[2]->value;  // dense/kernel
  const Tensor& wb = b.params()[2]->value;
  const Tensor& wc = c.params()[2]->value;
  int same = 0, differ = 0;
  for (int64_t i = 0; i < wa.numel(); ++i) {
    same += wa.f32()[i] == wb.f32()[i];
    differ += wa.f32()[i] != wc.f32()[i];
  }
  EXPECT_EQ(same, wa.numel());
  EXPECT_GT(differ, wa.numel() * 9 / 10);
  // glorot_uniform limit for the 5408 -> 64 kernel
  const float limit = std::sqrt(6.0f / (5408 + 64));
  for (float v : wa.span_f32()) ASSERT_LE(std::fabs(v), limit);
}

TEST(Model, ShapeMismatchNamesTheLayerAndBothShapes) {
  auto spec = json::parse(R"({"layers": [
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 3, "input_shape": [8, 8, 1]}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": 3}}]})");
  try {
    Model m(spec, 1);
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Conv2D 'conv2d_1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(None, 144)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("images"), std::string::npos) << msg;
  }
  Model ok(seed_cnn_spec(), 1);
  Tensor wrong(Shape{2, 28, 27, 1});
  try {
    ok.forward(wrong, false);
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("(2, 28, 27, 1)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(None, 28, 28, 1)"), std::string::npos) << msg;
  }
}

TEST(Model, UnknownOptionAndClassAreNamed) {
  auto spec = seed_cnn_spec();
  spec["layers"][3]["config"]["unitz"] = 3;
  try {
    Model m(spec, 1);
    FAIL();
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown option 'unitz'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("units"), std::string::npos) << msg;
  }
  spec = seed_cnn_spec();
  spec["layers"][1]["class_name"] = "MaxPool3D";
  EXPECT_THROW(Model(spec, 1), UsageError);
  spec = seed_cnn_spec();
  spec["layers"][0]["config"].erase("input_shape");
  EXPECT_THROW(Model(spec, 1), UsageError);
}

// A residual block (conv-bn-act-conv-bn + identity, act) checked end to end.
// tanh stands in for ReLU here: a conv weight moves all 75 pre-activations at
// once, so with ReLU some always cross the kink; ReLU has its own test.
TEST(Model, ResidualBlockGradient) {
  auto spec = json::parse(R"({"name": "block", "input_shape": [5, 5, 3], "layers": [
    {"class_name": "Conv2D", "config": {"filters": 3, "kernel_size": 3, "padding": "same"}, "inbound": [-1]},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "Activation", "config": {"activation": "tanh"}},
    {"class_name": "Conv2D", "config": {"filters": 3, "kernel_size": 3, "padding": "same"}},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "Add", "config": {}, "inbound": [4, -1]},
    {"class_name": "Activation", "config": {"activation": "tanh"}},
    {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": 1}, "inbound": [6]},
    {"class_name": "Add", "config": {}, "inbound": [7, 7]}]})");
  Model m(spec, 5);
  Rng rng(9);
  for (auto* p : m.params())
    if (p->name.ends_with("bias") || p->name.ends_with("beta"))
      for (float& v : p->value.span_f32()) v = rng.uniform(-0.1f, 0.1f);
  Tensor x = testing::random_tensor(Shape{3, 5, 5, 3}, rng);
  std::vector<testing::Probe> probes;
  for (auto* p : m.trainable_params()) probes.push_back({p->name, &p->value, &p->grad});
  EXPECT_EQ(probes.size(), 4u + 4u + 2u);
  testing::check_gradients([&]() -> const Tensor& { return m.forward(x, true); },
                           [&](const Tensor& dy) { m.backward(dy); }, probes);
  EXPECT_NE(m.summary().find("Connected to"), std::string::npos);
}

// A layer given one node twice (self-attention's query and value) and
// inputs of different shapes: the node's gradient is the sum of both slots'.
TEST(Model, SelfAttentionTakesOneNodeTwice) {
  auto spec = json::parse(R"({"name": "attend", "input_shape": [4, 6], "layers": [
    {"class_name": "MultiHeadAttention", "config": {"num_heads": 2, "key_dim": 3,
     "use_causal_mask": true}, "inbound": [-1, -1]},
    {"class_name": "MultiHeadAttention", "config": {"num_heads": 1, "key_dim": 2,
     "output_shape": 5}, "inbound": [0, 0]},
    {"class_name": "MultiHeadAttention", "config": {"num_heads": 2, "key_dim": 2},
     "inbound": [1, 0]},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 3}}]})");
  Model m(spec, 5);
  Rng rng(9);
  for (auto* p : m.params())
    if (p->name.ends_with("bias"))
      for (float& v : p->value.span_f32()) v = rng.uniform(-0.1f, 0.1f);
  Tensor x = testing::random_tensor(Shape{2, 4, 6}, rng);
  std::vector<testing::Probe> probes;
  for (auto* p : m.trainable_params()) probes.push_back({p->name, &p->value, &p->grad});
  testing::GradCheckOptions opt;
  opt.max_points = 12;
  testing::check_gradients([&]() -> const Tensor& { return m.forward(x, true); },
                           [&](const Tensor& dy) { m.backward(dy); }, probes, opt);
  EXPECT_EQ(m.output_shape(), Shape{3});
}

// An encoder-decoder: the encoder's sequence goes nowhere (its gradient is
// zeros), its final states start the decoder and also reach the loss through
// a Concatenate, so the gradient at h sums two consumers'.
TEST(Model, ReturnStateStartsTheDecoderAndReachesTheLoss) {
  auto spec = json::parse(R"({"name": "seq2seq", "input_shape": [4, 3], "layers": [
    {"class_name": "LSTM", "config": {"units": 4, "return_state": true}, "inbound": [-1]},
    {"class_name": "LSTM", "config": {"units": 4, "return_sequences": true},
     "inbound": [-1, [0, 1], [0, 2]]},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Concatenate", "config": {}, "inbound": [2, [0, 1]]},
    {"class_name": "Dense", "config": {"units": 3}}]})");
  Model m(spec, 5);
  EXPECT_EQ(m.nodes()[0].layer->num_outputs(), 3);
  EXPECT_EQ(m.output_shape(), Shape{3});
  EXPECT_NE(m.summary().find("lstm[1]"), std::string::npos);
  Rng rng(9);
  Tensor x = testing::random_tensor(Shape{2, 4, 3}, rng);
  std::vector<testing::Probe> probes;
  for (auto* p : m.trainable_params()) probes.push_back({p->name, &p->value, &p->grad});
  testing::GradCheckOptions opt;
  opt.max_points = 12;
  testing::check_gradients([&]() -> const Tensor& { return m.forward(x, true); },
                           [&](const Tensor& dy) { m.backward(dy); }, probes, opt);
  // An output the layer does not have is named with its layer.
  spec["layers"][1]["inbound"] = json::parse("[-1, [0, 1], [0, 3]]");
  try {
    Model bad(spec, 5);
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "LSTM 'lstm_1': takes output 3 of layer 'lstm', which has 3 output(s)");
  }
  spec["layers"][1]["inbound"] = json::parse("[-1, [0, 1]]");
  EXPECT_THROW(Model(spec, 5), UsageError);  // an LSTM's initial states are h and c
}

// A batch norm right after a convolution takes its statistics from the
// convolution's per-image moments (Model::share_moments); with a linear
// Activation layer between them it reads its input instead. Both give the
// same outputs, moving statistics and gradients.
TEST(Model, BatchNormTakesItsStatisticsFromTheConvolution) {
  auto spec_with = [](const char* between) {
    return json::parse(std::string(R"({"name": "moments", "input_shape": [7, 6, 16], "layers": [
      {"class_name": "Conv2D", "config": {"filters": 32, "kernel_size": 3, "padding": "same",
                                          "bias_initializer": "ones"}},
      )") + between + R"(
      {"class_name": "BatchNormalization", "config": {}},
      {"class_name": "ReLU", "config": {}}]})");
  };
  Model shared(spec_with(""), 5);
  Model own(spec_with(R"({"class_name": "Activation", "config": {"activation": "linear"}},)"), 5);
  Rng rng(9);
  const Tensor x = testing::random_tensor(Shape{3, 7, 6, 16}, rng);
  const Tensor dy = testing::random_tensor(Shape{3, 7, 6, 32}, rng);
  const Tensor& ys = shared.forward(x, true);
  const Tensor& yo = own.forward(x, true);
  ASSERT_EQ(ys.shape(), yo.shape());
  for (int64_t i = 0; i < ys.numel(); ++i) ASSERT_NEAR(ys.f32()[i], yo.f32()[i], 1e-4f) << i;
  // The convolution kept the moments of its last training forward.
  const Tensor* moments = shared.nodes()[0].layer->give_output_moments();
  ASSERT_NE(moments, nullptr);
  EXPECT_TRUE(moments->defined());
  shared.backward(dy);
  own.backward(dy);
  const auto ps = shared.params(), po = own.params();
  ASSERT_EQ(ps.size(), po.size());
  for (size_t k = 0; k < ps.size(); ++k) {
    for (int64_t i = 0; i < ps[k]->value.numel(); ++i)
      ASSERT_NEAR(ps[k]->value.f32()[i], po[k]->value.f32()[i], 1e-5f) << ps[k]->name << " " << i;
    for (int64_t i = 0; ps[k]->trainable && i < ps[k]->grad.numel(); ++i)
      ASSERT_NEAR(ps[k]->grad.f32()[i], po[k]->grad.f32()[i], 1e-3f) << ps[k]->name << " " << i;
  }
  // Inference reads the moving statistics; the moments are dropped.
  shared.forward(x, false);
  EXPECT_FALSE(moments->defined());
}

}  // namespace
}  // namespace drun::nn

namespace drun::nn {
namespace {

// ResNet-20's downsampling block (He et al. 2015, option B): conv 3x3 stride 2
// - BN - act - conv 3x3 - BN, plus the projection shortcut conv 1x1 stride 2 -
// BN, added, act; checked end to end through every variable and the input.
// tanh stands in for ReLU for the reason given above.
TEST(Model, ResNetDownsamplingBlockGradient) {
  auto spec = json::parse(R"({"name": "down", "input_shape": [6, 6, 2], "layers": [
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 3, "strides": 2,
                                        "padding": "same", "use_bias": false}, "inbound": [-1]},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "Activation", "config": {"activation": "tanh"}},
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 3, "padding": "same",
                                        "use_bias": false}},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 1, "strides": 2,
                                        "use_bias": false}, "inbound": [-1]},
    {"class_name": "BatchNormalization", "config": {}},
    {"class_name": "Add", "config": {}, "inbound": [4, 6]},
    {"class_name": "Activation", "config": {"activation": "tanh"}}]})");
  Model m(spec, 3);
  Rng rng(4);
  for (auto* p : m.params())
    if (p->name.ends_with("beta")) p->value.fill(0.1f);
  Tensor x = testing::random_tensor(Shape{3, 6, 6, 2}, rng);
  std::vector<testing::Probe> probes;
  for (auto* p : m.trainable_params()) probes.push_back({p->name, &p->value, &p->grad});
  EXPECT_EQ(probes.size(), 3u + 3u * 2u);  // 3 kernels, 3 (gamma, beta)
  testing::check_gradients([&]() -> const Tensor& { return m.forward(x, true); },
                           [&](const Tensor& dy) { m.backward(dy); }, probes);
  EXPECT_EQ(m.output_shape().str(), "(3, 3, 4)");
}

}  // namespace
}  // namespace drun::nn

namespace drun::nn {
namespace {

// A ReLU whose input comes from a batch norm or an Add that feeds nothing
// else is absorbed by it (Model::fuse_relus): same outputs and gradients as the
// unfused pair, which LeakyReLU with slope 0 (the same function, never fused)
// stands for. Where the batch norm's output has a second consumer, the ReLU
// runs on its own. An Add's absorbed ReLU with two consumers (as between
// residual blocks) has its gradient summed and masked in one pass; with
// three, summed, then masked; at the model's output, masked alone.
TEST(Model, BatchNormAbsorbsTheReluAfterIt) {
  auto spec_with = [](const char* relu_layer) {
    std::string relu = relu_layer;
    return json::parse(R"({"name": "fuse", "input_shape": [6, 6, 16], "layers": [
      {"class_name": "Conv2D", "config": {"filters": 16, "kernel_size": 3, "padding": "same",
                                          "use_bias": false}, "inbound": [-1]},
      {"class_name": "BatchNormalization", "config": {}},
      )" + relu + R"(,
      {"class_name": "Conv2D", "config": {"filters": 16, "kernel_size": 3, "padding": "same",
                                          "use_bias": false}},
      {"class_name": "BatchNormalization", "config": {}},
      )" + relu + R"(,
      {"class_name": "Conv2D", "config": {"filters": 16, "kernel_size": 1}},
      {"class_name": "Add", "config": {}, "inbound": [6, 4]},
      )" + relu + R"(,
      {"class_name": "Conv2D", "config": {"filters": 16, "kernel_size": 1}},
      {"class_name": "Add", "config": {}, "inbound": [9, 8]},
      )" + relu + R"(,
      {"class_name": "Conv2D", "config": {"filters": 16, "kernel_size": 1}},
      {"class_name": "Add", "config": {}, "inbound": [12, 11, 11]},
      )" + relu + R"(]})");
  };
  Model fused(spec_with(R"({"class_name": "ReLU", "config": {}})"), 7);
  Model plain(spec_with(R"({"class_name": "LeakyReLU", "config": {"negative_slope": 0.0}})"), 7);
  Rng rng(11);
  const Tensor x = testing::random_tensor(Shape{4, 6, 6, 16}, rng);
  const Tensor dy = testing::random_tensor(Shape{4, 6, 6, 16}, rng);
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "inference");
    const Tensor& yf = fused.forward(x, training);
    const Tensor& yp = plain.forward(x, training);
    ASSERT_EQ(yf.shape(), yp.shape());
    for (int64_t i = 0; i < yf.numel(); ++i)
      ASSERT_NEAR(yf.f32()[i], yp.f32()[i], 1e-5f) << "output " << i;
  }
  // Node 2's ReLU is absorbed (node 1 feeds only it): it never computes an
  // output of its own. Node 4 feeds node 5's ReLU and the Add: no fusion.
  EXPECT_FALSE(fused.nodes()[2].layer->output().defined());
  EXPECT_TRUE(fused.nodes()[5].layer->output().defined());
  // ReLUs absorbed by the Add before them: with two consumers, with three,
  // and the model's output node.
  EXPECT_FALSE(fused.nodes()[8].layer->output().defined());
  EXPECT_FALSE(fused.nodes()[11].layer->output().defined());
  EXPECT_FALSE(fused.nodes()[14].layer->output().defined());
  fused.forward(x, true);
  plain.forward(x, true);
  fused.backward(dy);
  plain.backward(dy);
  const auto pf = fused.trainable_params(), pp = plain.trainable_params();
  ASSERT_EQ(pf.size(), pp.size());
  for (size_t k = 0; k < pf.size(); ++k)
    for (int64_t i = 0; i < pf[k]->grad.numel(); ++i)
      ASSERT_NEAR(pf[k]->grad.f32()[i], pp[k]->grad.f32()[i], 1e-4f) << pf[k]->name << " " << i;
}

}  // namespace
}  // namespace drun::nn

namespace drun::nn {
namespace {

// A max pooling after a first convolution is absorbed by it
// (Model::fuse_max_pools): the same outputs and gradients as the two layers
// run one after the other, which a linear Activation before the convolution
// stands for (the convolution then owes an input gradient: never fused).
// The CPU pools in one pass where the direct kernels suit the convolution
// (K <= 32 taps) and through the convolution's output elsewhere (5x5 on 2
// channels); windows that overlap are not absorbed.
TEST(Model, FirstConvolutionAbsorbsTheMaxPoolingAfterIt) {
  struct Case {
    const char* conv;
    const char* pool;
    Shape input;
    bool absorbed;
  };
  const Case cases[] = {
      {R"({"filters": 32, "kernel_size": 3, "activation": "relu"})", R"({"pool_size": 2})",
       Shape{6, 8, 1}, true},
      {R"({"filters": 5, "kernel_size": 3, "padding": "same"})", R"({"pool_size": 3})",
       Shape{6, 7, 3}, true},
      {R"({"filters": 4, "kernel_size": 5, "activation": "relu"})", R"({"pool_size": 2})",
       Shape{8, 9, 2}, true},
      {R"({"filters": 8, "kernel_size": 3, "activation": "relu"})",
       R"({"pool_size": 2, "strides": 1})", Shape{6, 6, 1}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.conv) + " + " + c.pool);
    auto spec = [&](bool first) {
      json layers = json::array();
      if (!first)
        layers.push_back({{"class_name", "Activation"}, {"config", {{"activation", "linear"}}}});
      layers.push_back({{"class_name", "Conv2D"}, {"config", json::parse(c.conv)}});
      layers.push_back({{"class_name", "MaxPooling2D"}, {"config", json::parse(c.pool)}});
      layers.push_back({{"class_name", "Flatten"}, {"config", json::object()}});
      layers.push_back({{"class_name", "Dense"}, {"config", {{"units", 3}}}});
      return json{{"name", "pool"},
                  {"input_shape", {c.input[0], c.input[1], c.input[2]}},
                  {"layers", layers}};
    };
    Model fused(spec(true), 5), plain(spec(false), 5);
    const auto pf = fused.trainable_params(), pp = plain.trainable_params();
    ASSERT_EQ(pf.size(), pp.size());
    Rng rng(13);
    for (size_t k = 0; k < pf.size(); ++k) {
      for (float& v : pf[k]->value.span_f32()) v = rng.uniform(-0.5f, 0.5f);
      pp[k]->value.copy_from(pf[k]->value);
    }
    const Tensor x = testing::random_tensor(c.input.with_batch(2), rng);
    const Tensor dy = testing::random_tensor(Shape{2, 3}, rng);
    for (bool training : {true, false}) {
      const Tensor& yf = fused.forward(x, training);
      const Tensor& yp = plain.forward(x, training);
      ASSERT_EQ(yf.shape(), yp.shape());
      for (int64_t i = 0; i < yf.numel(); ++i)
        ASSERT_NEAR(yf.f32()[i], yp.f32()[i], 1e-5f) << "output " << i;
    }
    EXPECT_EQ(!fused.nodes()[1].layer->output().defined(), c.absorbed);
    fused.backward(dy);
    plain.backward(dy);
    for (size_t k = 0; k < pf.size(); ++k)
      for (int64_t i = 0; i < pf[k]->grad.numel(); ++i)
        ASSERT_NEAR(pf[k]->grad.f32()[i], pp[k]->grad.f32()[i], 1e-4f) << pf[k]->name << " " << i;
    // And against finite differences, as every layer's backward.
    std::vector<testing::Probe> probes;
    for (auto* p : pf) probes.push_back({p->name, &p->value, &p->grad});
    testing::check_gradients([&]() -> const Tensor& { return fused.forward(x, true); },
                             [&](const Tensor& d) { fused.backward(d); }, probes,
                             {.max_points = 300});
  }
}

// Token ids have no gradient (Layer::takes_ids): the model asks none of an
// Embedding and sums none from it, whether it reads the model's input or a
// layer's output (the linear Activation, which then gets no gradient at
// all); the tables' and the other weights' gradients are still right.
TEST(Model, EmbeddingInputsHaveNoGradient) {
  auto spec = json::parse(R"({"name": "tokens", "input_shape": [6], "layers": [
    {"class_name": "Embedding", "config": {"input_dim": 7, "output_dim": 3}, "inbound": [-1]},
    {"class_name": "LayerNormalization", "config": {}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 4}},
    {"class_name": "Activation", "config": {"activation": "linear"}, "inbound": [-1]},
    {"class_name": "Embedding", "config": {"input_dim": 7, "output_dim": 2}, "inbound": [4]},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 4}},
    {"class_name": "Add", "config": {}, "inbound": [3, 7]}]})");
  Model m(spec, 3);
  Rng rng(4);
  Tensor x(Shape{3, 6});
  for (int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = static_cast<float>(i % 7);
  std::vector<testing::Probe> probes;
  for (auto* p : m.trainable_params()) probes.push_back({p->name, &p->value, &p->grad});
  EXPECT_EQ(probes.size(), 1u + 2u + 2u + 1u + 2u);
  testing::check_gradients([&]() -> const Tensor& { return m.forward(x, true); },
                           [&](const Tensor& dy) { m.backward(dy); }, probes);
  EXPECT_FALSE(m.nodes()[0].layer->input_grad().defined());
  EXPECT_FALSE(m.nodes()[4].layer->input_grad().defined());
  // A bad id in a host batch is named before it reaches a device.
  x.f32()[5] = 7.0f;
  EXPECT_THROW(m.check_input(x), UsageError);
}

}  // namespace
}  // namespace drun::nn

// The layer registry (nn/layer_list.hpp) and the option schemas it is made of:
// what make_layer, the Keras importer and Lua's drun.nn read from it.
#include "nn/layer_registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "usage_error.hpp"

namespace drun::nn {
namespace {

using testing::expect_usage_error;

TEST(LayerRegistry, NamesAreUniqueAndPositionalsAreOptions) {
  std::set<std::string> seen;
  ASSERT_FALSE(layer_registry().empty());
  for (const LayerInfo* info : layer_registry()) {
    const Described& d = info->about;
    SCOPED_TRACE(d.name());
    EXPECT_FALSE(d.doc.empty());
    EXPECT_TRUE(info->make);
    for (const auto& n : d.names) EXPECT_TRUE(seen.insert(n).second) << n << " registered twice";
    for (const auto& p : d.positional) EXPECT_NE(d.schema.find(p), nullptr) << p;
    for (const char* common : {"name", "input_shape", "trainable"})
      EXPECT_NE(d.schema.find(common), nullptr) << common;
    for (const OptionSpec& o : d.schema.options) EXPECT_FALSE(o.doc.empty()) << o.name;
  }
}

TEST(LayerRegistry, AnAliasBuildsTheCanonicalClass) {
  EXPECT_STREQ(make_layer("MaxPool2D", json::object(), "p")->kind(), "MaxPooling2D");
  EXPECT_STREQ(make_layer("GlobalAvgPool2D", json::object(), "g")->kind(),
               "GlobalAveragePooling2D");
  EXPECT_EQ(find_layer("AvgPool2D"), find_layer("AveragePooling2D"));
  EXPECT_EQ(find_layer("Dense2"), nullptr);
}

TEST(LayerRegistry, KerasBaseNamesAreKerasSnakeCase) {
  const std::pair<const char*, const char*> cases[] = {
      {"Dense", "dense"},
      {"Conv2D", "conv2d"},
      {"MaxPooling2D", "max_pooling2d"},
      {"MaxPool2D", "max_pooling2d"},
      {"GlobalAveragePooling2D", "global_average_pooling2d"},
      {"BatchNormalization", "batch_normalization"},
      {"ReLU", "re_lu"},
      {"LeakyReLU", "leaky_re_lu"},
      {"MultiHeadAttention", "multi_head_attention"},
      {"LSTM", "lstm"},
      {"Conv2DTranspose", "conv2d_transpose"}};
  for (const auto& [cls, name] : cases) EXPECT_EQ(keras_base_name(cls), name) << cls;
}

TEST(LayerRegistry, EveryLayerBuildsFromItsRequiredOptions) {
  // The smallest value of each type, for the options a user must give.
  for (const LayerInfo* info : layer_registry()) {
    SCOPED_TRACE(info->about.name());
    json config = json::object();
    for (const OptionSpec& o : info->about.schema.options)
      if (o.required)
        config[o.name] = o.type == OptionType::string   ? json("relu")
                         : o.type == OptionType::number ? json(0.5)
                         : o.type == OptionType::list   ? json::array({1})
                         // A wrapper's layer (Bidirectional's): the smallest recurrent one.
                         : o.type == OptionType::table
                             ? json{{"class_name", "SimpleRNN"}, {"config", {{"units", 1}}}}
                             : json(1);
    EXPECT_STREQ(make_layer(info->about.name(), config, "x")->kind(), info->about.name().c_str());
  }
}

TEST(LayerRegistry, MistakesNameTheLayerAndTheOption) {
  expect_usage_error(
      [] {
        make_layer("Dense", {{"unitz", 3}}, "head");
      },
      {"Dense 'head'", "unknown option 'unitz'", "valid options:", "units"});
  expect_usage_error([] { make_layer("Dense", json::object(), "head"); },
                     {"Dense 'head'", "option 'units' is required"});
  expect_usage_error(
      [] {
        make_layer("Dense", {{"units", "ten"}}, "head");
      },
      {"Dense 'head'", "'units' has the wrong type", "integer"});
  expect_usage_error(
      [] {
        make_layer("Conv2D", {{"filters", 2}, {"kernel_size", {1, 2, 3}}}, "c");
      },
      {"'kernel_size' has the wrong type", "integer or pair"});
  expect_usage_error([] { make_layer("Dense3D", json::object(), "d"); },
                     {"unknown layer class 'Dense3D'", "valid:", "Dense", "MaxPool2D"});
}

TEST(OptionSchema, GetFallsBackOnTheSchemasDefault) {
  const Schema schema{{"rate", OptionType::number, 0.5, "a rate"},
                      {"steps", OptionType::integer, kRequired, "a count"},
                      {"seed", OptionType::integer, nullptr, "a seed"}};
  Options o({{"steps", 3}}, "thing", schema);
  EXPECT_EQ(o.get<double>("rate"), 0.5);
  EXPECT_EQ(o.get<int>("steps"), 3);
  EXPECT_FALSE(o.maybe<int>("seed").has_value());
  expect_usage_error([&] { o.get<int>("seed"); }, {"thing: option 'seed' is required"});
  EXPECT_THROW(o.get<int>("not_in_the_schema"), std::logic_error);
  o.finish();
  EXPECT_EQ(schema.names(), "rate, seed, steps");
  EXPECT_TRUE(fits(OptionType::integer, 2.0));
  EXPECT_FALSE(fits(OptionType::integer, 2.5));
  EXPECT_TRUE(fits(OptionType::pair, json::array({1, 2})));
  EXPECT_FALSE(fits(OptionType::pair, json::array({1})));
  EXPECT_TRUE(fits(OptionType::single, json::array({3})));
  EXPECT_TRUE(fits(OptionType::single, 3));
  EXPECT_FALSE(fits(OptionType::single, json::array({3, 3})));
}

}  // namespace
}  // namespace drun::nn

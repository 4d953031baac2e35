// make_optimizer: Keras' serialisation in and out, and the messages for mistakes.
#include <gtest/gtest.h>

#include "optim/optimizer.hpp"

namespace drun::optim {
namespace {

std::string error_of(const json& spec) {
  try {
    make_optimizer(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(MakeOptimizer, SGDConfigIsKeras) {
  auto opt = make_optimizer(
      json{{"class_name", "SGD"}, {"config", {{"learning_rate", 0.01}, {"momentum", 0.9}}}});
  json want = {
      {"class_name", "SGD"},
      {"config",
       {{"name", "SGD"}, {"learning_rate", 0.01}, {"momentum", 0.9}, {"nesterov", false}}}};
  EXPECT_EQ(opt->config(), want);
  EXPECT_EQ(opt->config()["config"]["learning_rate"].dump(), "0.01");
  EXPECT_EQ(opt->name(), "SGD");
  EXPECT_EQ(opt->class_name(), "SGD");
}

TEST(MakeOptimizer, DefaultsAreKeras) {
  auto c = make_optimizer(json("adam"))->config()["config"];
  EXPECT_EQ(c, (json{{"name", "Adam"},
                     {"learning_rate", 0.001},
                     {"beta_1", 0.9},
                     {"beta_2", 0.999},
                     {"epsilon", 1e-7},
                     {"amsgrad", false}}));
  c = make_optimizer(json("rmsprop"))->config()["config"];
  EXPECT_EQ(c, (json{{"name", "RMSprop"},
                     {"learning_rate", 0.001},
                     {"rho", 0.9},
                     {"momentum", 0.0},
                     {"epsilon", 1e-7},
                     {"centered", false}}));
  c = make_optimizer(json("adagrad"))->config()["config"];
  EXPECT_EQ(c, (json{{"name", "Adagrad"},
                     {"learning_rate", 0.001},
                     {"initial_accumulator_value", 0.1},
                     {"epsilon", 1e-7}}));
  c = make_optimizer(json("sgd"))->config()["config"];
  EXPECT_EQ(
      c, (json{{"name", "SGD"}, {"learning_rate", 0.01}, {"momentum", 0.0}, {"nesterov", false}}));
}

TEST(MakeOptimizer, ConfigRoundTrips) {
  std::vector<json> specs = {
      {{"class_name", "SGD"},
       {"config", {{"learning_rate", 0.1}, {"nesterov", true}, {"momentum", 0.5}, {"name", "s"}}}},
      {{"class_name", "Adam"}, {"config", {{"amsgrad", true}, {"weight_decay", 1e-4}}}},
      {{"class_name", "Adagrad"}, {"config", {{"decay", 0.01}, {"epsilon", 1e-5}}}},
      {{"class_name", "RMSProp"}, {"config", {{"centered", true}, {"momentum", 0.9}}}},
      json::parse(R"({"class_name": "SGD", "config": {"learning_rate": {
             "class_name": "CosineDecay",
             "config": {"initial_learning_rate": 0.1, "decay_steps": 1000}}}})"),
  };
  for (const json& spec : specs) {
    json c = make_optimizer(spec)->config();
    EXPECT_EQ(make_optimizer(c)->config(), c) << c.dump();
  }
  json c = make_optimizer(specs[3])->config();
  EXPECT_EQ(c["class_name"], "RMSprop");
  EXPECT_EQ(c["config"]["name"], "RMSprop");
  EXPECT_EQ(make_optimizer(specs[1])->config()["config"]["weight_decay"].dump(), "0.0001");
  EXPECT_EQ(make_optimizer(specs[2])->config()["config"]["decay"].dump(), "0.01");
  EXPECT_EQ(make_optimizer(specs[4])->config()["config"]["learning_rate"]["class_name"],
            "CosineDecay");
}

TEST(MakeOptimizer, AcceptsKeras3EnvelopeAndNullConfig) {
  auto opt = make_optimizer(json{{"module", "keras.optimizers"},
                                 {"class_name", "Adam"},
                                 {"config", nullptr},
                                 {"registered_name", nullptr}});
  EXPECT_EQ(opt->class_name(), "Adam");
}

TEST(MakeOptimizer, UnknownClassListsTheValidOnes) {
  std::string e = error_of(json{{"class_name", "sgd"}, {"config", json::object()}});
  EXPECT_TRUE(contains(e, "unknown optimizer class 'sgd'")) << e;
  EXPECT_TRUE(contains(e, "Adagrad, Adam, AdamW, RMSprop (or RMSProp), SGD")) << e;
  e = error_of(json("Nadam"));
  EXPECT_TRUE(contains(e, "unknown optimizer class 'Nadam'")) << e;
}

TEST(MakeOptimizer, UnknownKeyNamesItAndTheValidOnes) {
  std::string e = error_of(
      json{{"class_name", "SGD"}, {"config", {{"learning_rate", 0.1}, {"momentun", 0.9}}}});
  EXPECT_TRUE(contains(e, "SGD")) << e;
  EXPECT_TRUE(contains(e, "unknown option 'momentun'")) << e;
  EXPECT_TRUE(contains(
      e,
      "clipnorm, clipvalue, decay, global_clipnorm, gradient_accumulation_steps, learning_rate, "
      "momentum, name, nesterov, weight_decay"))
      << e;

  e = error_of(json{{"class_name", "Adam"}, {"config", {{"beta1", 0.9}}}});
  EXPECT_TRUE(contains(e, "unknown option 'beta1'")) << e;
  EXPECT_TRUE(contains(e, "amsgrad, beta_1, beta_2")) << e;

  e = error_of(json{{"class_name", "Adam"}, {"conf", json::object()}});
  EXPECT_TRUE(contains(e, "unknown option 'conf'")) << e;
}

TEST(MakeOptimizer, WrongTypes) {
  std::string e = error_of(json{{"class_name", "SGD"}, {"config", {{"nesterov", "yes"}}}});
  EXPECT_TRUE(contains(e, "option 'nesterov' has the wrong type")) << e;
  e = error_of(json{{"class_name", "Adam"}, {"config", {{"beta_1", "0.9"}}}});
  EXPECT_TRUE(contains(e, "option 'beta_1' has the wrong type")) << e;
  e = error_of(json{{"class_name", "SGD"}, {"config", {{"learning_rate", "fast"}}}});
  EXPECT_TRUE(contains(e, "SGD: learning_rate:")) << e;
  EXPECT_TRUE(contains(e, "expected a number")) << e;
  e = error_of(json{{"class_name", "SGD"}, {"config", 3}});
  EXPECT_TRUE(contains(e, "options must be a table")) << e;
  e = error_of(json{{"class_name", 7}});
  EXPECT_TRUE(contains(e, "'class_name' has the wrong type")) << e;
  e = error_of(json(3.0));
  EXPECT_TRUE(contains(e, "expected {class_name")) << e;
  e = error_of(json{{"config", json::object()}});
  EXPECT_TRUE(contains(e, "'class_name' is required")) << e;
}

TEST(MakeOptimizer, ScheduleErrorsNameTheOptimizer) {
  std::string e = error_of(json::parse(R"({"class_name": "Adam", "config": {
      "learning_rate": {"class_name": "ExponentialDecay", "config": {"rate": 1}}}})"));
  EXPECT_TRUE(contains(e, "Adam: learning_rate:")) << e;
  EXPECT_TRUE(contains(e, "unknown option 'rate'")) << e;
}

TEST(MakeOptimizer, ValuesOutOfRange) {
  EXPECT_TRUE(contains(error_of(json{{"class_name", "SGD"}, {"config", {{"momentum", 1.5}}}}),
                       "momentum must be in [0"));
  EXPECT_TRUE(contains(error_of(json{{"class_name", "Adam"}, {"config", {{"beta_1", 1.0}}}}),
                       "beta_1 must be in [0"));
  EXPECT_TRUE(contains(
      error_of(json{{"class_name", "Adagrad"}, {"config", {{"initial_accumulator_value", -1}}}}),
      "initial_accumulator_value must not be negative"));
  EXPECT_TRUE(contains(error_of(json{{"class_name", "RMSprop"}, {"config", {{"rho", 2}}}}),
                       "rho must be in [0"));
  EXPECT_TRUE(contains(error_of(json{{"class_name", "SGD"}, {"config", {{"weight_decay", -0.1}}}}),
                       "weight_decay must not be negative"));
}

}  // namespace
}  // namespace drun::optim
